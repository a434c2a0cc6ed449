# Builds and runs todaysim with its database on a volume. Not exercised on the project's own
# machines (no Docker engine runs there); kept deliberately plain.
FROM swift:6.1-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends libmicrohttpd-dev libsqlite3-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY OpenAPI ./OpenAPI
COPY Tests ./Tests
RUN swift build -c release --product todaysim \
    && mkdir -p /out && cp -R "$(swift build -c release --show-bin-path)"/todaysim \
       "$(swift build -c release --show-bin-path)"/todaysim_TodayOpenAPI.resources /out/

FROM swift:6.1-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends libmicrohttpd12 libsqlite3-0 curl \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/ /opt/todaysim/
VOLUME /data
EXPOSE 8080
HEALTHCHECK CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
ENTRYPOINT ["/opt/todaysim/todaysim"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8080", "--db", "/data/sessions.sqlite"]
