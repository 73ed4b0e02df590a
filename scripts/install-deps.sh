#!/usr/bin/env bash
# Installs Denpex's build and test dependencies from Debian 12 packages.
# Idempotent: does nothing (and needs no network) when every package is already installed.
#
#   scripts/install-deps.sh                  # build + test dependencies
#   scripts/install-deps.sh --report-tests   # ... plus chromium, for the HTML report test
#   scripts/install-deps.sh --print          # list the packages and exit
#
# chromium (≈100 MB download, ≈300 MB installed with its libraries) is a group of its own:
# only Eval.HtmlReportRendersTablesTimelineAndIncidentsInHeadlessChromium needs it, and that
# test skips with a message when it is absent. CI (.ci/run) installs the group.
set -euo pipefail

packages=(
  g++ cmake ninja-build
  protobuf-compiler libprotobuf-dev
  libboost-graph-dev libtbb-dev libcli11-dev
  libgtest-dev libgmock-dev catch2
)

if [[ " $* " == *" --report-tests "* ]]; then
  packages+=(chromium)
fi

if [[ " $* " == *" --print "* ]]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo=()
if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
