# Sourced by Scripts/sanitizers and Scripts/flaky: how the suite is built and run under a
# sanitizer, in one place.
#   sanitizer_build NAME   swift build --build-tests --sanitize=NAME in .build/sanitize-NAME
#                          (log in .build/sanitize-NAME.build.log); fails with its tail
#                          (TODAYSIM_BUILD_JOBS, when set: its compiler jobs, `-j`)
#   sanitizer_scratch NAME the build folder
# A report fails a run: TSan exits 66 at the end when it reported anything, ASan stops at the
# first error. Leak checking is off: the Swift runtime's and Foundation's caches live until exit.
# Foundation's own overflow in Process.run is suppressed (Scripts/sanitizers.d/asan.supp says why).
SANITIZERS_SH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export TSAN_OPTIONS="halt_on_error=0:exitcode=66:second_deadlock_stack=1"
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=0:suppressions=$SANITIZERS_SH_ROOT/Scripts/sanitizers.d/asan.supp"

sanitizer_scratch() { echo ".build/sanitize-$1"; }

sanitizer_build() {
    local scratch
    scratch=$(sanitizer_scratch "$1")
    mkdir -p .build
    swift build --build-tests --sanitize="$1" --scratch-path "$scratch" ${TODAYSIM_BUILD_JOBS:+-j "$TODAYSIM_BUILD_JOBS"} \
        >"$scratch.build.log" 2>&1 || {
        tail -30 "$scratch.build.log" >&2
        echo "the $1 sanitizer build failed ($scratch.build.log)" >&2
        return 1
    }
}
