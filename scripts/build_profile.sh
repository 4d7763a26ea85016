#!/usr/bin/env bash
# Where the CPU of a fresh-machine `make test` goes: clones HEAD into a new folder, runs `make test` there
# with ccache off (CCACHE_DISABLE=1) and every compiler and linker call timed, then prints CPU seconds
# (user + sys, which the other work on the machine changes far less than wall time) per build, per
# target and per heavy translation unit, the link time, and the wall time of each step of the run.
#
#   scripts/build_profile.sh [FOLDER]      # default: a new folder under /tmp; the log stays there
#
# The compilers are timed by wrappers named g++, c++, clang++ and clang++-14 put first in PATH (CMake
# and scripts/fuzz.sh find them there); each call appends "kind seconds_cpu seconds_wall output" to
# FOLDER/compile-times.log. Packages must already be installed: apt's time is not part of the figure.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-$(mktemp -d /tmp/refenc-build-profile.XXXXXX)}"
mkdir -p "$work/wrap"
log="$work/compile-times.log"
: >"$log"
for name in g++ c++ clang++ clang++-14; do
  cat >"$work/wrap/$name" <<EOF
#!/usr/bin/python3
import os, resource, subprocess, sys, time
args = sys.argv[1:]
out = args[args.index("-o") + 1] if "-o" in args[:-1] else "-"
kind = "compile" if "-c" in args else ("link" if out != "-" else "other")
start = time.monotonic()
rc = subprocess.call(["/usr/bin/$name"] + args)
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
with open("$log", "a") as f:
    f.write(f"{kind} {ru.ru_utime + ru.ru_stime:.2f} {time.monotonic() - start:.2f} {os.path.abspath(out)}\n")
sys.exit(rc)
EOF
  chmod +x "$work/wrap/$name"
done

git -C "$root" clone -q "$root" "$work/clone"
start=$(date +%s)
(cd "$work/clone" && PATH="$work/wrap:$PATH" CCACHE_DISABLE=1 /usr/bin/time -f "%e s wall, %U s user, %S s sys" \
   make test) 2>&1 | while IFS= read -r line; do printf '%(%H:%M:%S)T %s\n' -1 "$line"; done >"$work/make-test.log"
echo "make test: $(( $(date +%s) - start )) s wall; log $work/make-test.log"
tail -3 "$work/make-test.log"
/usr/bin/python3 - "$log" "$work/clone" <<'EOF'
import collections, re, sys
log, clone = sys.argv[1], sys.argv[2] + "/"
rows = [l.split(maxsplit=3) for l in open(log).read().splitlines() if l.strip()]
def where(path):
    path = path.replace(clone, "")
    build = path.split("/")[1] if path.startswith("build/") else "?"
    m = re.search(r"CMakeFiles/([^/]+)\.dir/", path)
    target = m.group(1) if m else ("fuzz" if build == "fuzz" else path.rsplit("/", 1)[-1])
    return build, target, path
by_build, by_target, units = collections.Counter(), collections.Counter(), []
links = collections.Counter()
for kind, cpu, wall, out in rows:
    build, target, path = where(out)
    cpu = float(cpu)
    if kind == "compile":
        by_build[build] += cpu; by_target[(build, target)] += cpu; units.append((cpu, path))
    elif kind == "link":
        links[build] += cpu; by_target[(build, target + " (link)")] += cpu
total = sum(float(r[1]) for r in rows)
print(f"\ncompiler and linker CPU: {total:.0f} s in {len(rows)} calls "
      f"(compile {sum(by_build.values()):.0f} s, link {sum(links.values()):.0f} s)")
print("\n| build | compile CPU s | link CPU s |\n|---|---:|---:|")
for b in sorted(set(by_build) | set(links), key=lambda b: -(by_build[b] + links[b])):
    print(f"| {b} | {by_build[b]:.0f} | {links[b]:.0f} |")
print("\n| build / target | CPU s |\n|---|---:|")
for (b, t), s in by_target.most_common(30):
    print(f"| {b} / {t} | {s:.0f} |")
print("\n| heaviest translation units | CPU s |\n|---|---:|")
for cpu, path in sorted(units, reverse=True)[:25]:
    print(f"| {path} | {cpu:.1f} |")
EOF
echo
grep -E '^[0-9:]+ (==>|<==)' "$work/make-test.log" || true
