# Builds and runs todaysim with its database on a volume. No Docker engine runs on the project's
# own machines, so this file has not been built there: systemtests/test_dockerfile.py (in Scripts/test)
# checks instead that it copies every path Package.swift needs and uses the project's Swift.
FROM swift:6.3-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends libmicrohttpd-dev libsqlite3-dev libpq-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Plugins ./Plugins
COPY OpenAPI ./OpenAPI
COPY Web ./Web
# The rules the binary serves at /rules (Plugins/EmbedFiles embeds this file from outside Web/).
COPY docs/RULES.md ./docs/RULES.md
COPY VERSION ./VERSION
COPY Recorder ./Recorder
# Not built here, but SwiftPM refuses a package whose declared test folders are missing.
COPY Tests ./Tests
RUN swift build -c release --product todaysim \
    && install -D "$(swift build -c release --show-bin-path)/todaysim" /out/todaysim

# The binary embeds the OpenAPI document, the dashboard, bridge.js and the rules: it is the whole server.
FROM swift:6.3-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends libmicrohttpd12 libsqlite3-0 libpq5 curl \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/todaysim /opt/todaysim/todaysim
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
ENTRYPOINT ["/opt/todaysim/todaysim"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8080", "--db", "/data/sessions.sqlite"]
