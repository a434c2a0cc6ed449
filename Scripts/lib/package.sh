# Sourced by Scripts/run, Scripts/package and Scripts/test: the build that Scripts/run serves,
# Scripts/package packages and Scripts/test tests, in one place.
#   static_build CONFIGURATION   swift build CONFIGURATION's todaysim with the Swift runtime and
#                                Foundation linked in (--static-swift-stdlib)
#   static_binary CONFIGURATION  that binary's path
# It has a build folder of its own (.build/static): SwiftPM reuses objects compiled for the
# shared runtime when only --static-swift-stdlib changes (seen with Swift 6.3: only the link ran,
# against Foundation's shared modules, and failed), and the dynamic build of `swift build` and
# `swift test` stays as it is. FoundationNetworking (URLSession, the client commands) links
# libcurl as a shared library from Debian's libcurl4: ensure_static_link_dependencies installs its
# -dev package, which the static link needs.
STATIC_SCRATCH=.build/static

static_build() {
    swift build -c "$1" --product todaysim --static-swift-stdlib --scratch-path "$STATIC_SCRATCH"
}

static_binary() {
    echo "$(swift build -c "$1" --static-swift-stdlib --scratch-path "$STATIC_SCRATCH" --show-bin-path)/todaysim"
}
