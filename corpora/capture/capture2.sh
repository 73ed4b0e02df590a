#!/usr/bin/env bash
# Captures corpora/real2/ (see corpora/real2/README.md): a plain training script launched the
# way teams launch jobs, each incident kept in the layout the software writes by default.
# Needs root, PyTorch and Slurm from Debian (installed by install.sh); not part of CI.
#   corpora/capture/capture2.sh                 every incident (about 30 minutes)
#   corpora/capture/capture2.sh --only ID,ID    some of them
#   corpora/capture/capture2.sh --batch 2       only the second batch (kill in save, slow
#                                               rank, agent/node loss, requeue; ~12 minutes)
#   corpora/capture/capture2.sh --list          the incident ids
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
"$here/install.sh"
exec /usr/bin/python3 "$here/capture2.py" "$@"
