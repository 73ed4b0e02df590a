#!/usr/bin/env bash
# Re-captures the real corpus under corpora/real/ (see corpora/README.md).
# Needs root, PyTorch and Slurm from Debian (installed by install.sh); not part of CI.
#   corpora/capture/capture.sh                 every incident (about 25 minutes)
#   corpora/capture/capture.sh --only ID,ID    some of them
#   corpora/capture/capture.sh --list          the incident ids
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
"$here/install.sh"
exec /usr/bin/python3 "$here/capture.py" "$@"
