#!/usr/bin/env bash
# Builds the Debian package from this build tree with CPack, checks its metadata and
# contents, unpacks it into a scratch root, validates the desktop files, and runs the
# installed kiln-cli (--version and a render with the starter model) and kiln --version
# from there, with a clean environment: everything must come from the installed paths.
#   test_package.sh BUILD_DIR VERSION
set -euo pipefail
build=$(readlink -f "$1")
expected_version=$2
# Resolved, as the programs report their own paths resolved.
scratch=$(readlink -f "$(mktemp -d "${TMPDIR:-/tmp}/kiln-package-test.XXXXXX")")
trap 'rm -rf "$scratch"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
check() { local what=$1; shift; if "$@"; then echo "ok: $what"; else fail "$what"; fi; }

# 1. The package.
(cd "$scratch" && cpack --config "$build/CPackConfig.cmake" -G DEB -B "$scratch/pkg" > "$scratch/cpack.log" 2>&1) || {
  cat "$scratch/cpack.log" >&2
  echo "FAIL: cpack could not build the package" >&2
  exit 1
}
shopt -s nullglob
debs=("$scratch"/pkg/kiln_*.deb)
shopt -u nullglob
deb=${debs[0]:-}
[ -n "$deb" ] || { echo "FAIL: cpack wrote no kiln_*.deb" >&2; cat "$scratch/cpack.log" >&2; exit 1; }
echo "package: $(basename "$deb") ($(du -h "$deb" | cut -f1))"

# 2. Its control fields.
field() { dpkg-deb -f "$deb" "$1"; }
check "package name" [ "$(field Package)" = kiln ]
version=$(field Version)
check "version $version is the project's ($expected_version)" [ "$version" = "$expected_version" ]
check "architecture" [ "$(field Architecture)" = "$(dpkg --print-architecture)" ]
depends=$(field Depends)
echo "Depends: $depends"
for dep in libtorch libqt6widgets6 libqt6svg6 libopenimageio libavcodec libavformat libswscale libsentencepiece \
           libopenblas0; do
  check "depends on $dep" grep -q "$dep" <<< "$depends"
done
check "section graphics" [ "$(field Section)" = graphics ]

# 3. Its files.
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' > "$scratch/files"
for f in /usr/bin/kiln /usr/bin/kiln-cli /usr/lib/kiln/libkiln_spm.so \
         /usr/share/kiln/models/kiln-starter.safetensors /usr/share/kiln/bpe_simple_vocab_16e6.txt.gz \
         /usr/share/applications/org.kiln.Kiln.desktop /usr/share/metainfo/org.kiln.Kiln.metainfo.xml \
         /usr/share/icons/hicolor/scalable/apps/org.kiln.Kiln.svg \
         /usr/share/man/man1/kiln-cli.1.gz /usr/share/man/man1/kiln.1.gz; do
  check "ships $f" grep -qx "$f" "$scratch/files"
done
for size in 16 32 48 64 128 256 512; do
  check "ships the ${size}px icon" grep -qx "/usr/share/icons/hicolor/${size}x${size}/apps/org.kiln.Kiln.png" "$scratch/files"
done
check "nothing outside /usr" bash -c "! grep -v '^/usr' '$scratch/files' | grep -v '^/$' | grep -q ."
check "no test or benchmark programs" bash -c "! grep -qE '/(test_|bench_)[^/]*$' '$scratch/files'"

# 4. Unpacked into a scratch root.
root="$scratch/root"
dpkg-deb -x "$deb" "$root"
png_size() { od -An -tu1 -j16 -N8 "$1" | awk '{print ($1*16777216+$2*65536+$3*256+$4) "x" ($5*16777216+$6*65536+$7*256+$8)}'; }
check "the 256px icon is 256x256" [ "$(png_size "$root/usr/share/icons/hicolor/256x256/apps/org.kiln.Kiln.png")" = 256x256 ]
check "the desktop entry validates" desktop-file-validate "$root/usr/share/applications/org.kiln.Kiln.desktop"
check "the desktop entry names the icon" grep -qx "Icon=org.kiln.Kiln" "$root/usr/share/applications/org.kiln.Kiln.desktop"
check "the AppStream metainfo validates" appstreamcli validate --no-net "$root/usr/share/metainfo/org.kiln.Kiln.metainfo.xml"
check "the metainfo carries the version" grep -q "release version=\"$version\"" "$root/usr/share/metainfo/org.kiln.Kiln.metainfo.xml"
for page in kiln kiln-cli; do
  warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$root/usr/share/man/man1/$page.1.gz" 2>&1 >/dev/null || true)
  check "the $page man page renders without warnings${warnings:+: $warnings}" [ -z "$warnings" ]
  check "the $page man page names the version" bash -c "zcat '$root/usr/share/man/man1/$page.1.gz' | grep -q 'Kiln $version'"
done
check "the sentencepiece module's libraries resolve" bash -c \
  "set -o pipefail; ldd '$root/usr/lib/kiln/libkiln_spm.so' > '$scratch/ldd.txt' && ! grep -q 'not found' '$scratch/ldd.txt'"

# 5. The installed programs, with nothing from this machine's build or source tree.
home="$scratch/home"
mkdir -p "$home"
run() { (cd "$scratch" && env -i HOME="$home" PATH=/usr/bin:/bin LC_ALL=C.UTF-8 XDG_PICTURES_DIR="$home/Pictures" "$@"); }
out=$(run "$root/usr/bin/kiln-cli" --version) || fail "kiln-cli --version exited with $?"
echo "$out"
check "kiln-cli --version names the version" grep -qx "kiln-cli $version" <<< "$out"
check "kiln-cli --version names libtorch" grep -qE '^libtorch [0-9]+\.[0-9]+' <<< "$out"
check "kiln-cli --version names the GPU backends" grep -qE '^GPU backends: ' <<< "$out"
check "kiln-cli reads its data from the scratch root" grep -qx "data: $root/usr/share/kiln" <<< "$out"
check "kiln-cli loads the installed sentencepiece module" grep -qx "sentencepiece: $root/usr/lib/kiln/libkiln_spm.so" <<< "$out"
gui=$(run "$root/usr/bin/kiln" --version) || fail "kiln --version exited with $?"
check "kiln --version (no display) names the version" grep -qx "kiln $version" <<< "$gui"
if run "$root/usr/bin/kiln-cli" render --prompt "a red circle" --steps 4 --seed 1 --out "$scratch/first.png" \
     > "$scratch/render.log" 2>&1; then
  check "the starter render wrote a PNG" bash -c "[ \"\$(od -An -c -j1 -N3 '$scratch/first.png' | tr -d ' ')\" = PNG ]"
  check "the starter render has the starter model's native size, 64x64" [ "$(png_size "$scratch/first.png")" = 64x64 ]
else
  cat "$scratch/render.log" >&2
  fail "the installed kiln-cli could not render with the starter model"
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all package checks passed"
