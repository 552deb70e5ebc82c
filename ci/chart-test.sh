#!/usr/bin/env bash
# Chart checks: helm lint, strict validation of the rendered manifests against the Kubernetes API
# types, template unit tests, the alerts' rules and their unit tests (promtool), refused values
# files, and the documentation of every value.
#
# Needs Go (at /usr/local/go or on PATH), jq and promtool (Debian's prometheus package). Its
# tools are built with `go install` at the versions pinned in tests/chart/go.mod and tests/go.work
# (helm, helm-unittest, and the validators in tests/chart/cmd), and in tests/chart/helm-docs/go.mod
# (helm-docs, outside the workspace), into $PSTRAIN_TOOLS_DIR (default:
# $(go env GOPATH)/pstrain-chart-tools), and rebuilt only when those pins or sources change.
# `ci/chart-test.sh tools`: only the tools (ci/test.sh builds them ahead, in the background).
set -uo pipefail
cd "$(dirname "$0")/.."

source ci/go-env.sh
if ! command -v go >/dev/null; then
  echo "FAIL tools: go not found (install Go at /usr/local/go)"
  echo "0 passed, 1 failed"
  exit 1
fi

tools="${PSTRAIN_TOOLS_DIR:-$(go env GOPATH)/pstrain-chart-tools}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Keep helm away from the user's own configuration, cache and plugins.
export HELM_CONFIG_HOME="$work/helm/config" HELM_CACHE_HOME="$work/helm/cache" \
  HELM_DATA_HOME="$work/helm/data" HELM_PLUGINS="$tools/helm-plugins"
export PATH="$tools/bin:$PATH"

source ci/checks.sh

module=tests/chart
helm_docs=tests/chart/helm-docs
# The tools' sources, and the build lists they are built from (tests/go.work's, shared, and
# helm-docs' own).
stamp="$({ cat $(find "$module/cmd" -name '*.go' | sort) "$helm_docs/go.mod" "$helm_docs/go.sum"
  go version; go env CGO_ENABLED GOFLAGS; (cd "$module" && go list -m all); } |
  sha256sum | cut -d' ' -f1)"

install_tools() {
  local helm_version kube_minor
  helm_version="$(cd "$module" && go list -m -f '{{.Version}}' helm.sh/helm/v3)" || return 1
  kube_minor="$(cd "$module" && go list -m -f '{{.Version}}' k8s.io/client-go | cut -d. -f2)" || return 1
  # What helm's own release build sets: its version, and the Kubernetes version that
  # `helm template` and `helm lint` assume (that of the client libraries: 0.N is 1.N).
  local ldflags="-X helm.sh/helm/v3/internal/version.version=$helm_version"
  local pkg
  for pkg in chartutil lint/rules; do
    ldflags+=" -X helm.sh/helm/v3/pkg/$pkg.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/$pkg.k8sVersionMinor=$kube_minor"
  done
  (cd "$module" && GOBIN="$tools/bin" go install -ldflags "$ldflags" $(tools_of .) ./cmd/...) || return 1
  (cd "$helm_docs" && GOWORK=off GOBIN="$tools/bin" go install tool) || return 1
  # helm-unittest as a helm plugin, laid out by hand instead of `helm plugin install`.
  local plugin="$tools/helm-plugins/unittest"
  mkdir -p "$plugin"
  ln -sf "$tools/bin/helm-unittest" "$plugin/untt"
  cat >"$plugin/plugin.yaml" <<EOF
name: unittest
version: "$(cd "$module" && go list -m -f '{{.Version}}' github.com/helm-unittest/helm-unittest | sed 's/^v//')"
usage: unit tests for helm charts
description: Runs the chart's template unit tests (tests/*_test.yaml).
command: "\$HELM_PLUGIN_DIR/untt"
EOF
  echo "$stamp" >"$tools/stamp"
}

# One build of the tools at a time: a second waits, then finds them built.
mkdir -p "$tools"
exec 9>"$tools/build.lock"
flock 9
if [ "$(cat "$tools/stamp" 2>/dev/null)" != "$stamp" ]; then
  echo "building the chart test tools into $tools (a few minutes on the first run)"
  if ! out="$(install_tools 2>&1)"; then
    fail "tools: go install of the pinned chart tools" "$out"
    summary
  fi
fi
exec 9>&-
[ "${1:-}" = tools ] && exit
pass "tools: helm $(helm version --template '{{.Version}}'), helm-unittest, helm-docs, kubestrict, valuesdoc"

# run NAME CMD...: the check passes when CMD succeeds.
run() {
  local name="$1" out
  shift
  if out="$("$@" 2>&1)"; then pass "$name"; else fail "$name" "$out"; fi
}

# validate NAME KUBESTRICT_ARGS -- HELM_TEMPLATE_ARGS...: the rendered manifests are all valid.
validate() {
  local name="$1" out
  shift
  local strict_args=()
  while [ "$1" != "--" ]; do strict_args+=("$1"); shift; done
  shift
  if out="$(helm template mnist chart "$@" 2>&1 | kubestrict "${strict_args[@]}" 2>&1)"; then
    pass "$name"
  else
    fail "$name" "$out"
  fi
}

# refused NAME PATTERN CMD...: CMD fails and its output matches PATTERN.
refused() {
  local name="$1" pattern="$2" out
  shift 2
  if out="$("$@" 2>&1)"; then
    fail "$name: accepted" "$out"
  elif grep -qE -- "$pattern" <<<"$out"; then
    pass "$name"
  else
    fail "$name: refused without naming $pattern" "$out"
  fi
}

echo "== lint"
run "helm lint --strict, default values" helm lint --strict chart
run "helm lint --strict, values.yml" helm lint --strict chart --values values.yml

echo "== rendered manifests, strictly decoded into the Kubernetes API types"
validate "default values meet Pod Security restricted" -pod-security restricted --
validate "values.yml" -- --values values.yml
validate "every optional feature (tests/chart/values/all-features.yaml), Pod Security restricted" \
  -pod-security restricted -- --values tests/chart/values/all-features.yaml
run "helm lint --strict, every optional feature" \
  helm lint --strict chart --values tests/chart/values/all-features.yaml
validate "commonLabels on every resource and pod template, every optional feature" \
  -labels cost-center=ml-42 -- --values tests/chart/values/all-features.yaml
validate "commonLabels on every resource and pod template, with serving and the helm test pods" \
  -labels team=vision -- --set commonLabels.team=vision --set serving.enabled=true --set logs.type=hostPath
refused "the validator refuses a resource without a label -labels asks for" 'labels\[team\]: Required value' \
  bash -c 'helm template mnist chart | kubestrict -labels team=vision'
validate "logs.type=emptyDir meets Pod Security restricted" -pod-security restricted -- \
  --set logs.type=emptyDir
validate "values.yml with --set logs.type=emptyDir (as the README says) meets Pod Security restricted" \
  -pod-security restricted -- --values values.yml --set logs.type=emptyDir
validate "what NOTES.txt says to set where Pod Security is restricted meets it (emptyDir logs, checkpoint claims)" \
  -pod-security restricted -- --set logs.type=emptyDir --set checkpoints.persistentVolumeClaim.enabled=true
refused "hostPath logs need a namespace above Pod Security baseline" 'baseline": hostPath volumes' \
  bash -c 'helm template mnist chart --set logs.type=hostPath | kubestrict -pod-security baseline'
validate "checkpoints on a hostPath of their own, with the init container handing it over" -- \
  --set checkpoints.volume.hostPath.path=/var/lib/pstrain --set checkpoints.everySeconds=0
validate "checkpoints.volume on shared storage, Pod Security restricted" -pod-security restricted -- \
  --set logs.type=emptyDir --set checkpoints.volume.persistentVolumeClaim.claimName=pstrain-state
validate "authentication with an existing Secret" -- \
  --set auth.existingSecret=training-key --set auth.key=hmac
validate "authentication off" -- --set auth.enabled=false
# GitOps (Argo CD, Flux's or kubectl's re-apply) renders without a cluster on every sync: the
# same values must give the same manifests, or every sync restarts the pods into a new run.
run "two renderings of the default values are byte-identical: a re-apply restarts nothing" \
  diff <(helm template mnist chart) <(helm template mnist chart)
run "two renderings of every optional feature are byte-identical" \
  diff <(helm template mnist chart --values tests/chart/values/all-features.yaml) \
  <(helm template mnist chart --values tests/chart/values/all-features.yaml)
refused "the validator refuses a key volume naming a key its Secret lacks" 'Secret/mnist-auth has no key hmac' \
  bash -c 'helm template mnist chart | sed "s/- key: \"token\"/- key: \"hmac\"/" | kubestrict'
refused "the validator refuses a claim template without a storage request" 'requests.storage: Required' \
  bash -c 'helm template mnist chart --set checkpoints.persistentVolumeClaim.enabled=true |
    sed "/storage: \"1Gi\"/d" | kubestrict'
refused "the validator refuses a misspelt field" 'unknown field "spec.servicName"' \
  bash -c 'helm template mnist chart | sed "s/serviceName:/servicName:/" | kubestrict'
# The ServiceMonitor is a custom resource: decoded strictly into the Prometheus Operator's types.
refused "the validator refuses a misspelt ServiceMonitor field" 'unknown field "spec.endpoints\[0\].schema"' \
  bash -c 'helm template mnist chart --set metrics.serviceMonitor.enabled=true |
    sed "s/scheme:/schema:/" | kubestrict'
refused "the validator refuses a ServiceMonitor selecting none of the Services" 'selects none of the Services' \
  bash -c 'helm template mnist chart --set metrics.serviceMonitor.enabled=true |
    sed "s/values: \[ps, worker\]/values: [chief]/" | kubestrict'
refused "the validator refuses a PodDisruptionBudget selecting none of the pods" 'selects none of the pod templates' \
  bash -c 'helm template mnist chart | sed "/^kind: PodDisruptionBudget/,/^---/ s/component: ps/component: chief/" | kubestrict'
refused "the validator refuses a PodDisruptionBudget's maxUnavailable that is no percentage" 'spec.maxUnavailable: Invalid value: "1.5%"' \
  bash -c 'helm template mnist chart | sed "s/maxUnavailable: 1$/maxUnavailable: 1.5%/" | kubestrict'
refused "the validator refuses a misspelt PodMonitor field" 'unknown field "spec.podMetricsEndpoints\[0\].schema"' \
  bash -c 'helm template mnist chart --set metrics.podMonitor.enabled=true |
    sed "s/scheme:/schema:/" | kubestrict'
refused "the validator refuses a PodMonitor selecting none of the pods" 'selects none of the pod templates' \
  bash -c 'helm template mnist chart --set metrics.podMonitor.enabled=true |
    sed "s/values: \[ps, worker\]/values: [chief]/" | kubestrict'
refused "the validator refuses a PodMonitor on a port the pods lack" 'podMetricsEndpoints\[0\].port: Invalid value: "metrics"' \
  bash -c 'helm template mnist chart --set metrics.podMonitor.enabled=true |
    sed "s/- port: http$/- port: metrics/" | kubestrict'
refused "the validator refuses a misspelt PrometheusRule field" 'unknown field "spec.groups\[0\].rules\[2\].fore"' \
  bash -c 'helm template mnist chart --set metrics.prometheusRule.enabled=true | sed "s/ for: 5m/ fore: 5m/" | kubestrict'
refused "the validator refuses a probe on a port its container lacks" 'livenessProbe.port: Not found: "metrics"' \
  bash -c 'helm template mnist chart | sed "s/port: http$/port: metrics/" | kubestrict'

echo "== chart/ci values files (ct lint-and-install --config ci/ct.yaml installs each)"
# chart-testing itself is not on the Go module proxy: helm lint and the strict validation of
# each file stand in for ct lint here.
for values in chart/ci/*-values.yaml; do
  run "helm lint --strict, $values" helm lint --strict chart --values "$values"
  validate "$values renders valid manifests meeting Pod Security restricted" -pod-security restricted -- --values "$values"
done

echo "== template unit tests"
if out="$(helm unittest --color=false chart 2>&1)"; then
  pass "helm unittest: $(grep -E '^Tests:' <<<"$out" | tr -s ' ')"
else
  fail "helm unittest" "$out"
fi

echo "== alerts (chart/files/alerts.yaml), with promtool"
# The PrometheusRule's spec is a rules file: rendered for the release mnist, checked, and run
# against the unit tests of tests/chart/alerts, which name the rendered file alerts.yaml.
rules_of() {
  helm template mnist chart --set metrics.prometheusRule.enabled=true \
    --show-only templates/prometheusrule.yaml "$@" | sed -n '/^spec:/,$p' | sed '1d; s/^  //'
}
if ! command -v promtool >/dev/null; then
  fail "alerts: promtool not found (Debian's prometheus package; ci/install-deps.sh --tests)"
else
  mkdir -p "$work/alerts"
  cp tests/chart/alerts/alerts_test.yaml "$work/alerts/"
  # check_rules NAME FILE: promtool finds the four alerts in FILE, and nothing wrong.
  check_rules() {
    run "$1" bash -c 'out="$(promtool check rules "$0" 2>&1)"; echo "$out"
      grep -q "SUCCESS: 4 rules found" <<<"$out"' "$2"
  }
  rules_of --namespace training >"$work/alerts/alerts.yaml"
  check_rules "promtool check rules: the alerts of the defaults" "$work/alerts/alerts.yaml"
  rules_of --namespace team-b --set fullnameOverride=fashion --set metrics.prometheusRule.stalledMinutes=30 \
    --set metrics.prometheusRule.accuracyDrop=0.1 >"$work/alerts/other.yaml"
  check_rules "promtool check rules: the alerts of another prefix, namespace and thresholds (--set)" \
    "$work/alerts/other.yaml"
  run "promtool test rules: each alert fires where tests/chart/alerts says, and nowhere else" \
    promtool test rules "$work/alerts/alerts_test.yaml"
  # The tests can fail: without the stall rule's guard, a ps that has just started fires.
  sed -i '/ offset 10m$/d' "$work/alerts/alerts.yaml"
  refused "promtool test rules fails on a stall rule that fires for a ps that has just started" \
    'alertname: PstrainTrainingStalled' promtool test rules "$work/alerts/alerts_test.yaml"
fi

# The dashboard's queries against a run are tests/dashboard/check.sh's (a phase of ci/test.sh of
# its own, as it needs build/pstrain); here, that the file the ConfigMap holds is JSON.
run "chart/files/dashboard.json, the Grafana dashboard, is JSON with its uid" \
  jq -e '.uid == "pstrain"' chart/files/dashboard.json

echo "== distributed-tensorflow values files"
dtf=tests/chart/values/distributed-tensorflow.yml
run "the seed's values file: accepted as it is by helm lint --strict" helm lint --strict chart --values "$dtf"
validate "the seed's values file renders valid manifests as it is" -- --values "$dtf"
# Comments and the image aside, values.yml is that file.
strip() { grep -vE '^\s*(#|$)|^\s*(repository|tag):' "$1"; }
run "values.yml is that file with only the image changed" diff -u <(strip "$dtf") <(strip values.yml)
# The stable/distributed-tensorflow chart's own defaults (its values.yaml) and the example of its
# README, written out from their documented content: each key is accepted with its meaning, or
# refused with one line that says what to write instead.
cat >"$work/dtf-defaults.yaml" <<'VALUES'
worker: {number: 2, podManagementPolicy: Parallel, port: 9000,
  image: {repository: dysproz/distributed-tf, tag: 1.7.0, pullPolicy: IfNotPresent}}
ps: {number: 2, podManagementPolicy: Parallel, port: 8000,
  image: {repository: dysproz/distributed-tf, tag: 1.7.0, pullPolicy: IfNotPresent}}
hyperparams: {batchsize: 20, learningrate: 0.001, trainsteps: 0}
VALUES
cat >"$work/dtf-readme.yaml" <<'VALUES'
worker: {number: 2, podManagementPolicy: Parallel, port: 9090, gpuCount: 1,
  image: {repository: dysproz/distributed-tf, tag: 1.6.0-gpu}}
ps: {number: 2, podManagementPolicy: Parallel, port: 8080,
  image: {repository: dysproz/distributed-tf, tag: 1.6.0, pullPolicy: IfNotPresent}}
hyperparams: {batchsize: 20, learningrate: 0.001, trainsteps: 10000}
VALUES
# Every other key its README documents, as a user of that chart would give it.
cat >"$work/dtf-keys.yaml" <<'VALUES'
worker: {gpuCount: 0, env: {TF_CPP_MIN_LOG_LEVEL: 2}}
ps: {env: {OMP_NUM_THREADS: "1"}, resources: {limits: {cpu: "1", memory: 512Mi}, requests: {cpu: 250m}}}
hyperparams: {trainsteps: 10000, datadir: /data/mnist, logdir: /tmp/mnist-log, hiddenunits: 100}
volumes: [{name: data, hostPath: {path: /srv/mnist}}]
volumeMounts: [{name: data, mountPath: /data}]
VALUES
for tool in "helm lint --strict chart" "helm template mnist chart"; do
  refused "$tool: its defaults, trainsteps 0 refused saying what to write" \
    'hyperparams.trainsteps 0 \(in distributed-tensorflow: train until stopped\).*set hyperparams.trainsteps to the steps to train' \
    $tool --values "$work/dtf-defaults.yaml"
  refused "$tool: its README example, gpuCount 1 refused saying what to write" \
    'worker.gpuCount 1: pstrain trains on CPUs and uses no GPU; remove it' \
    $tool --values "$work/dtf-readme.yaml"
done
run "its README example without gpuCount (ps.port 8080, worker.port 9090): accepted by helm lint --strict" \
  helm lint --strict chart --values "$work/dtf-readme.yaml" --set worker.gpuCount=0
validate "its README example without gpuCount renders valid manifests" -- \
  --values "$work/dtf-readme.yaml" --set worker.gpuCount=0
run "its other documented keys (env, resources, gpuCount 0, datadir on a mount, logdir): accepted by helm lint --strict" \
  helm lint --strict chart --values "$work/dtf-keys.yaml"
validate "its other documented keys render valid manifests" -- --values "$work/dtf-keys.yaml"

echo "== bad values are refused, naming the key"
while IFS='|' read -r name values pattern; do
  printf '%s\n' "$values" >"$work/bad.yaml"
  refused "helm lint: $name" "$pattern" helm lint --strict chart --values "$work/bad.yaml"
  refused "helm template: $name" "$pattern" helm template mnist chart --values "$work/bad.yaml"
done <<'EOF'
worker.number 0|{worker: {number: 0}}|/worker/number
ps.number -1|{ps: {number: -1}}|/ps/number
ps.number 1025, above the daemon's maximum|{ps: {number: 1025}}|/ps/number
ps.podDisruptionBudget.maxUnavailable 150%|{ps: {podDisruptionBudget: {maxUnavailable: 150%}}}|/ps/podDisruptionBudget/maxUnavailable
ps.limit.cpu abc|{ps: {limit: {cpu: abc}}}|/ps/limit/cpu
worker.podManagementPolicy Sometimes|{worker: {podManagementPolicy: Sometimes}}|/worker/podManagementPolicy
unknown top-level key|{epochs: 10}|'epochs' not allowed
unknown key in a role|{ps: {replicas: 2}}|'replicas' not allowed
hyperparams.optimizer adagrad|{hyperparams: {optimizer: adagrad}}|/hyperparams/optimizer
hyperparams.pushEncoding q5|{hyperparams: {pushEncoding: q5}}|/hyperparams/pushEncoding
hyperparams.pullEncoding fp16|{hyperparams: {pullEncoding: fp16}}|/hyperparams/pullEncoding
hyperparams.learningrate not a number|{hyperparams: {learningrate: "0.01a"}}|/hyperparams/learningrate
logs.type nfs|{logs: {type: nfs}}|/logs/type
http.port 0|{http: {port: 0}}|/http/port
probes.liveness.periodSeconds 0|{probes: {liveness: {periodSeconds: 0}}}|/probes/liveness/periodSeconds
a startup probe, which the chart does not have|{probes: {startup: {enabled: true}}}|'startup' not allowed
metrics.serviceMonitor.interval 30 seconds|{metrics: {serviceMonitor: {interval: 30 seconds}}}|/metrics/serviceMonitor/interval
metrics.podMonitor.scrapeTimeout 10 seconds|{metrics: {podMonitor: {scrapeTimeout: 10 seconds}}}|/metrics/podMonitor/scrapeTimeout
metrics.prometheusRule.stalledMinutes 0|{metrics: {prometheusRule: {stalledMinutes: 0}}}|/metrics/prometheusRule/stalledMinutes
metrics.prometheusRule.accuracyDrop 5 (points, not a fraction)|{metrics: {prometheusRule: {accuracyDrop: 5}}}|/metrics/prometheusRule/accuracyDrop
test.timeoutSeconds 0|{test: {timeoutSeconds: 0}}|/test/timeoutSeconds
networkPolicy.httpFrom with a misspelt peer|{networkPolicy: {httpFrom: [{ipblock: {cidr: 10.0.0.0/8}}]}}|'ipblock' not allowed
idleTimeoutSeconds -1|{idleTimeoutSeconds: -1}|/idleTimeoutSeconds
auth.enabled yes (a string)|{auth: {enabled: "yes"}}|/auth/enabled
auth.existingSecret not a Secret name|{auth: {existingSecret: Training_Key}}|/auth/existingSecret
auth.key a path|{auth: {key: keys/hmac}}|/auth/key
checkpoints.everySeconds -5|{checkpoints: {everySeconds: -5}}|/checkpoints/everySeconds
checkpoints.mountPath relative|{checkpoints: {mountPath: checkpoints}}|/checkpoints/mountPath
checkpoints.volume with a name|{checkpoints: {volume: {name: state, emptyDir: {}}}}|/checkpoints/volume
checkpoints.persistentVolumeClaim.accessModes ReadOnlyMany|{checkpoints: {persistentVolumeClaim: {accessModes: [ReadOnlyMany]}}}|/checkpoints/persistentVolumeClaim/accessModes
checkpoints.persistentVolumeClaim.size 1 GB|{checkpoints: {persistentVolumeClaim: {size: 1 GB}}}|/checkpoints/persistentVolumeClaim/size
hyperparams.trainsteps above what a values file holds exactly|{hyperparams: {trainsteps: 9223372036854775807}}|/hyperparams/trainsteps
hyperparams.seed above what a values file holds exactly|{hyperparams: {seed: 9007199254740993}}|/hyperparams/seed
reporting.logEverySteps above what a values file holds exactly|{reporting: {logEverySteps: 1e19}}|/reporting/logEverySteps
probes.readiness.periodSeconds above an int32|{probes: {readiness: {periodSeconds: 2147483648}}}|/probes/readiness/periodSeconds
worker.image.digest not a digest|{worker: {image: {digest: latest}}}|/worker/image/digest
a resource name with a space|{ps: {limit: {gpu count: 1}}}|invalid propertyName 'gpu count'
runId with a slash|{runId: a/b}|/runId
clusterName a path|{clusterName: ../a}|/clusterName
serviceAccount.name with capitals|{serviceAccount: {name: Trainer}}|/serviceAccount/name
extraEnvFrom naming both a ConfigMap and a Secret|{extraEnvFrom: [{configMapRef: {name: a}, secretRef: {name: b}}]}|/extraEnvFrom/0
extraEnvFrom with a misspelt source|{extraEnvFrom: [{configmapRef: {name: a}}]}|'configmapRef' not allowed
global.imageRegistry with a scheme|{global: {imageRegistry: "https://registry.internal"}}|/global/imageRegistry
global.compatibility.openshift.adaptSecurityContext yes|{global: {compatibility: {openshift: {adaptSecurityContext: "yes"}}}}|/global/compatibility/openshift/adaptSecurityContext
image.pullPolicy sometimes|{image: {pullPolicy: Sometimes}}|/image/pullPolicy
schedulerName with capitals|{schedulerName: Volcano}|/schedulerName
priorityClass.value above what users may give|{priorityClass: {value: 2000000000}}|/priorityClass/value
ps.podLabels with a number|{ps: {podLabels: {tier: 1}}}|/ps/podLabels/tier
endOfRun.scaleDown a string|{endOfRun: {scaleDown: "yes"}}|/endOfRun/scaleDown
EOF
# Rules between values, or needing a sentence to say what to write instead, are the templates'
# fails; helm lint refuses those too (see pstrain.fail).
while IFS='|' read -r name values pattern; do
  printf '%s\n' "$values" >"$work/bad.yaml"
  refused "helm lint: $name" "$pattern" helm lint --strict chart --values "$work/bad.yaml"
  refused "helm template: $name" "$pattern" helm template mnist chart --values "$work/bad.yaml"
done <<'EOF'
http.port equal to worker.port|{http: {port: 9000}}|http.port 9000 is also worker.port
checkpoints.volume and checkpoints.persistentVolumeClaim together|{checkpoints: {volume: {emptyDir: {}}, persistentVolumeClaim: {enabled: true}}}|checkpoints.volume and checkpoints.persistentVolumeClaim.enabled exclude each other
checkpoints.mountPath on the key's directory|{checkpoints: {volume: {emptyDir: {}}, mountPath: /etc/pstrain-auth}}|checkpoints.mountPath /etc/pstrain-auth is also the key's directory
a request above its limit|{worker: {request: {memory: 1Gi}, limit: {memory: 512Mi}}}|worker.request.memory 1Gi is above worker.limit.memory 512Mi
an image digest in the repository|{ps: {image: {repository: "pstrain@sha256:3f5a9c0e2b7d4f1a6c8e0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a"}}}|ps.image.repository "pstrain@sha256:3f5a.*" holds a digest: give the repository alone, and the digest as ps.image.digest
fullnameOverride not a DNS-1035 label|{fullnameOverride: mnist.v2}|fullnameOverride "mnist.v2" cannot prefix the pods' names, which must be DNS-1035 labels
fullnameOverride too long for the ServiceMonitor's name|{fullnameOverride: a-prefix-of-forty-five-characters-is-too-long}|"a-prefix-of-forty-five-characters-is-too-long-metrics" must be at most 52 characters
hyperparams.datadir on no volume|{hyperparams: {datadir: /tmp/mnist-data}}|hyperparams.datadir /tmp/mnist-data is on none of volumeMounts
extraEnv replacing POD_NAME|{extraEnv: [{name: POD_NAME, value: x}]}|extraEnv or worker.env sets POD_NAME
hyperparams.learningrate 0 as a string, beyond what the schema checks of a string|{hyperparams: {learningrate: "0"}}|hyperparams.learningrate 0 is out of range: it must be above 0 and at most 10
metrics.prometheusRule.accuracyDrop 5 as a string|{metrics: {prometheusRule: {enabled: true, accuracyDrop: "5"}}}|metrics.prometheusRule.accuracyDrop 5 is out of range: it must be above 0 and at most 1
endOfRun.scaleDown with emptyDir logs|{endOfRun: {scaleDown: true}}|endOfRun.scaleDown with the logs in an emptyDir would delete the trained model with the pods
an image digest in the shared repository|{image: {repository: "pstrain@sha256:3f5a9c0e2b7d4f1a6c8e0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a"}}|image.repository "pstrain@sha256:3f5a.*" holds a digest: give the repository alone, and the digest as image.digest
EOF
echo "== values given with --set, as a hyperparameter sweep gives them"
# helm's --set reads an integer as a number and anything else (0.01, 1e-3) as a string: each
# setting is accepted by helm lint --strict, and the daemon's file holds its value as written.
while IFS='|' read -r setting line; do
  if ! out="$(helm lint --strict chart --set "$setting" 2>&1)"; then
    fail "--set $setting: refused by helm lint --strict" "$out"
  elif ! out="$(helm template mnist chart --set "$setting" --show-only templates/configmap.yaml 2>&1)"; then
    fail "--set $setting: refused by helm template" "$out"
  elif ! grep -qxF "    $line" <<<"$out"; then
    fail "--set $setting: the daemon's file lacks the line $line" "$out"
  else
    pass "--set $setting: accepted, the daemon's file says $line"
  fi
done <<'EOF'
hyperparams.learningrate=0.01|learningRate: 0.01
hyperparams.learningrate=1e-3|learningRate: 0.001
hyperparams.learningrate=.5|learningRate: 0.5
hyperparams.learningrate=1|learningRate: 1
hyperparams.batchsize=50|batchSize: 50
hyperparams.trainsteps=20000|trainSteps: 20000
hyperparams.seed=7|seed: 7
hyperparams.hiddenunits=256|hiddenUnits: "256"
hyperparams.hiddenunits=256\,128|hiddenUnits: "256,128"
hyperparams.optimizer=sgd|optimizer: sgd
hyperparams.sync=true|sync: true
hyperparams.pushEncoding=fp32|pushEncoding: fp32
hyperparams.pullEncoding=q8|pullEncoding: q8
reporting.evalEverySteps=500|evalEverySteps: 500
checkpoints.everySeconds=10|checkpointEverySeconds: 10
EOF
validate "--set ps.limit.cpu=0.5 and worker.limit.cpu=1.5, decimal CPU limits as strings" -- \
  --set ps.limit.cpu=0.5 --set worker.limit.cpu=1.5
refused "--set hyperparams.learningrate=0,01 (a decimal comma), refused naming the key" '/hyperparams/learningrate' \
  helm lint --strict chart --set 'hyperparams.learningrate=0\,01'

# The release name reaches only helm template and install (helm lint names its release itself).
refused "helm template: release name mnist.v2, not a DNS-1035 label" \
  "release name \"mnist.v2\" cannot prefix the pods' names, which must be DNS-1035 labels" \
  helm template mnist.v2 chart
refused "helm template: release name 2mnist, starting with a digit" \
  'release name "2mnist" cannot prefix' helm template 2mnist chart
refused "helm template: a 45-character release name, whose ServiceMonitor's name would be 53" \
  'must be at most 52 characters, so the release name at most 44: install under another name, or set fullnameOverride' \
  helm template a-release-name-of-forty-five-characters-long1 chart
run "helm template: a 44-character release name" helm template a-release-name-of-forty-four-characters-long chart

echo "== contract and documentation"
# Every key the chart writes into the daemon's file is one the daemon documents
# (docs/operations.md, "Configuration"); the daemon refuses a file with any other key.
config_keys() {
  helm template mnist chart --values values.yml --show-only templates/configmap.yaml |
    sed -n '/pstrain.yaml: |/,$p' | sed -n 's/^    \([A-Za-z]*\):.*/\1/p'
}
reference="docs/operations.md's Configuration table"
daemon_keys() {
  sed -n '/^## Configuration/,/^## /p' docs/operations.md | sed -n 's/^| `\([A-Za-z]*\)` |.*/\1/p'
}
if ! keys="$(config_keys)" || [ -z "$keys" ]; then
  fail "daemon configuration keys: the ConfigMap did not render"
elif unknown="$(grep -vxF -f <(daemon_keys) <<<"$keys")"; then
  fail "daemon configuration keys: not in $reference" "$unknown"
else
  pass "daemon configuration keys ($(wc -l <<<"$keys")) are all in $reference"
fi
# chart/README.md is generated: helm-docs writes its values table from the "# --" comments of
# values.yaml into chart/README.md.gotmpl, which holds the prose. Run it after changing either:
#   helm-docs --chart-search-root chart --sort-values-order file
readme_of() { helm-docs --chart-search-root "$1" --sort-values-order file --dry-run --log-level warning; }
run "chart/README.md is what helm-docs writes from values.yaml and README.md.gotmpl" \
  diff -u chart/README.md <(readme_of chart)
run "every value of values.yaml has a helm-docs description and a row in chart/README.md's table" \
  valuesdoc chart
# Both checks fail where they should: on a copy of the chart whose values.yaml gained a comment
# that README.md lacks, and on one with a value whose comment is not helm-docs' description.
cp -r chart "$work/chart"
sed -i 's/^  # -- batchsize is the number of examples/&, a changed comment,/' "$work/chart/values.yaml"
refused "the README check fails on a values.yaml comment README.md lacks" '^\+.*batchsize.*a changed comment' \
  diff -u "$work/chart/README.md" <(readme_of "$work/chart")
sed -i 's/^  # -- batchsize is/  # batchsize is/' "$work/chart/values.yaml"
refused "valuesdoc refuses a value without a helm-docs description" \
  '`hyperparams.batchsize` needs a comment whose last paragraph starts with "# -- batchsize"' \
  valuesdoc "$work/chart"

summary
