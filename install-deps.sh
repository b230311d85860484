#!/usr/bin/env bash
# Installs kmcts's build and test dependencies from Debian 12 packages. Idempotent: when
# everything is already installed it touches nothing (and needs no network).
set -euo pipefail
packages=(
  build-essential cmake ninja-build git
  libtbb-dev libboost-dev libboost-graph-dev nlohmann-json3-dev libcurl4-openssl-dev libssl-dev
  libsqlite3-dev libcli11-dev libfmt-dev libspdlog-dev doctest-dev
  libseccomp-dev  # the seccomp filter of candidate processes (linked statically)
  graphviz sqlite3
  libopenmpi-dev openmpi-bin  # --mpi (hardware/remote) and its loopback tests
  python3 python3-torch  # the KernelBench harness's protocol tests on the CPU (tests/python)
  hipcc  # HIP 5.2: the tests compile every HIP problem for gfx90a (no AMD GPU needed)
)
# The figures of `kmcts report`: every Debian build of gnuplot has the pngcairo and svg terminals.
# gnuplot-nox (no X) conflicts with gnuplot-qt and gnuplot-x11, so one of those, if installed, is kept.
gnuplot_package=gnuplot-nox
for p in gnuplot-qt gnuplot-x11; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" && gnuplot_package=$p
done
packages+=("$gnuplot_package")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
