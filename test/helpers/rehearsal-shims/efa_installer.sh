#!/bin/sh
# The rehearsal's EFA installer (inside the stand-in tarball): records its flags and leaves libfabric and
# the aws-ofi-nccl plugin where the real one puts them.
. /opt/rehearsal/lib.sh
record efa_installer.sh "$@"
for a in "$@"; do
  case "$a" in
  -y | --skip-kmod | --skip-limit-conf | --no-verify | --minimal) ;;
  *) fail "efa_installer.sh: option $a is not rehearsed" 2 ;;
  esac
done
case " $* " in *" -y "*) ;; *) fail "efa_installer.sh asks before it installs: pass -y" 1 ;; esac
mkdir -p /opt/amazon/efa/lib /opt/amazon/efa/bin /opt/amazon/ofi-nccl/lib/x86_64-linux-gnu
echo "libfabric stand-in" >/opt/amazon/efa/lib/libfabric.so.1
ln -sf libfabric.so.1 /opt/amazon/efa/lib/libfabric.so
echo "fi_info stand-in" >/opt/amazon/efa/bin/fi_info
echo "aws-ofi-nccl stand-in" >/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-net.so
echo "EFA installer (rehearsal stand-in) done"
