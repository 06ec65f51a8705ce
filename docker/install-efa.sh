#!/bin/sh
# Step 1 of the Dockerfile: the EFA stack for multi-host jobs on EFA instance types (p4d, p4de, p5, …):
# libfabric with the EFA provider in /opt/amazon/efa and the aws-ofi-nccl plugin (libnccl-net.so) in
# /opt/amazon/ofi-nccl, from AWS's EFA installer (its GPG signature checked against AWS's key), without
# the kernel module (the host has it). An empty EFA_INSTALLER_VERSION installs nothing (an AWS
# deep-learning base has its own).
set -eu
if [ -z "${EFA_INSTALLER_VERSION}" ]; then
  echo "EFA: not installed (EFA_INSTALLER_VERSION is empty)"
  exit 0
fi
apt-get update
apt-get install -y --no-install-recommends curl ca-certificates gnupg
work=$(mktemp -d)
cd "$work"
tarball="aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz"
curl -fsSLO "https://efa-installer.amazonaws.com/${tarball}"
curl -fsSLO "https://efa-installer.amazonaws.com/${tarball}.sig"
curl -fsSL -o aws-efa-installer.key https://efa-installer.amazonaws.com/aws-efa-installer.key
export GNUPGHOME="$work/gnupg"
mkdir -m 700 "$GNUPGHOME"
gpg --batch --import aws-efa-installer.key
gpg --batch --verify "${tarball}.sig" "${tarball}"
tar -xzf "${tarball}"
cd aws-efa-installer
./efa_installer.sh -y --skip-kmod --skip-limit-conf --no-verify
cd /
rm -rf "$work" /var/lib/apt/lists/*
test -e /opt/amazon/efa/lib/libfabric.so
