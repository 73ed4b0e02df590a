#!/usr/bin/env bash
# Installs the real components the capture harness drives, from Debian packages only:
# PyTorch (python3-torch: gloo on CPU, torchrun as `python3 -m torch.distributed.run`),
# Slurm (slurmctld, slurmd, slurm-client) and munge. Idempotent: a no-op when present.
# Not part of CI: only `corpora/capture/capture.sh` needs these.
set -euo pipefail

pkgs=(python3-torch python3-numpy python3-protobuf protobuf-compiler slurmctld slurmd slurm-client munge util-linux procps)

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install.sh: all present (${pkgs[*]})"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

echo "install.sh: installing ${missing[*]}"
$SUDO apt-get update
# The slurm/munge packages try to start their services from maintainer scripts; the harness
# starts and stops its own daemons, so keep the package scripts from starting any.
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
  $SUDO chmod +x "$policy"
  created_policy=1
fi
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
if [ "$created_policy" -eq 1 ]; then $SUDO rm -f "$policy"; fi
