#!/usr/bin/env bash
# The Go client's part of `./mvnw -B verify` (clients/go/pom.xml runs it at integration-test):
# go vet, then go test (with the race detector where the toolchain supports it) against the
# server jar in $LEASEHOLD_SERVER_JAR. Without a Go toolchain it says so loudly and exits 0:
# the rest of the build does not need Go. .ci/run installs Go, so CI never skips these tests.
set -euo pipefail
cd "${BASH_SOURCE[0]%/*}"
if ! command -v go >/dev/null 2>&1; then
  echo "[WARNING] =========================================================================="
  echo "[WARNING] No Go toolchain ('go' is not on PATH): the Go client's tests were NOT run."
  echo "[WARNING] Install Go 1.19 or later (Debian: apt-get install golang-go) to run them."
  echo "[WARNING] =========================================================================="
  exit 0
fi
go version
echo "server jar: ${LEASEHOLD_SERVER_JAR:-<unset: the tests look for ../../target/leasehold-*.jar>}"
go vet ./...
race=()
# The race detector needs cgo and a C compiler, on a platform it supports.
if [[ "${GO_RACE:-true}" == "true" && "$(go env CGO_ENABLED)" == "1" ]] && command -v gcc >/dev/null 2>&1 \
   && go tool dist list 2>/dev/null | grep -qx "$(go env GOOS)/$(go env GOARCH)"; then
  case "$(go env GOOS)/$(go env GOARCH)" in
    linux/amd64|linux/arm64|linux/ppc64le|linux/s390x|darwin/amd64|darwin/arm64|freebsd/amd64|netbsd/amd64|windows/amd64)
      race=(-race) ;;
  esac
fi
if [[ ${#race[@]} -eq 0 ]]; then
  echo "go test without -race (no cgo/C compiler or an unsupported platform, or GO_RACE=false)"
fi
exec go test "${race[@]}" -count=1 -timeout 8m ./...
