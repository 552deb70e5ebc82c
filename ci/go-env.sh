# Sourced by every script that builds Go code: Go on PATH, and the settings of every Go build of
# the test command. Static binaries with trimmed paths, as helm's and Kubernetes' own release
# builds are made; one set of settings for all lets Go's build cache compile a package once for
# the chart tools, the tests and the kind cluster's binaries (with tests/go.work's one version of
# each dependency).
export PATH="$PATH:/usr/local/go/bin"
export CGO_ENABLED=0 GOFLAGS="-trimpath -buildvcs=false"

# tools_of DIR: the tool packages of the Go module in DIR, from its go.mod (needs jq). Under
# tests/go.work the pattern `tool` means every workspace module's tools, not one module's.
tools_of() { (cd "$1" && go mod edit -json | jq -r '.Tool[].Path'); }
