# Sourced by the scripts that run an external suite's C programs against mpsim's C door
# (`mpich-suite.sh`, `osu-suite.sh`, `mbi-suite.sh`): builds the release `mpsim` and C library,
# and copies the suite's part `suite_part` out of `suite_src` into `$out/src` (a work tree, or
# a bare/mirror git directory read with `git archive`). Sets `mpsim` and `MPSIM_LIB_DIR`,
# empties `$out/{src,bin,logs}`.
#
# Usage: suite_prelude SUITE_SRC PART [STRIP]    (STRIP: leading path parts dropped, for
#        `git archive`; a copy from a work tree keeps PART's last part)
suite_prelude() {
    local suite_src=$1 part=$2 strip=${3:-0}
    (cd "$root" && CARGO_INCREMENTAL=0 cargo build --release --quiet -p mpsim-cli -p mpsim-c) || exit 1
    mpsim="$root/target/release/mpsim"
    export MPSIM_LIB_DIR="$root/target/release"
    rm -rf "$out/src" "$out/bin" "$out/logs"
    mkdir -p "$out/src" "$out/bin" "$out/logs"
    if [ -d "$suite_src/$part" ]; then
        cp -r "$suite_src/$part" "$out/src/"
    else
        git -C "$suite_src" archive HEAD "$part" | tar -x -C "$out/src" --strip-components="$strip"
    fi
}
