package podrun

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const testManifests = `
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config}
data: {app.yaml: "port: 80\n"}
---
apiVersion: v1
kind: Secret
metadata: {name: web-key}
data: {key: c2VjcmV0}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  clusterIP: None
  selector: {app: web}
  ports: [{name: http, port: 80}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  serviceName: web
  replicas: 2
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      securityContext: {runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, fsGroup: 10001}
      containers:
        - name: web
          image: web:1
          args: [serve, --name, $(POD_NAME), --literal, $$(POD_NAME)]
          env:
            - name: POD_NAME
              valueFrom: {fieldRef: {fieldPath: metadata.name}}
            - name: GREETING
              value: hello $(POD_NAME) and $(UNDEFINED)
          ports: [{name: http, containerPort: 80}]
          resources:
            limits: {cpu: 200m, memory: 125Mi}
          securityContext:
            readOnlyRootFilesystem: true
            allowPrivilegeEscalation: false
            capabilities: {drop: [ALL]}
          volumeMounts:
            - {name: config, mountPath: /etc/web}
            - {name: logs, mountPath: /var/log/web, subPathExpr: $(POD_NAME)}
            - {name: key, mountPath: /etc/web-key}
      volumes:
        - {name: config, configMap: {name: web-config}}
        - {name: logs, hostPath: {path: /tmp/logs, type: DirectoryOrCreate}}
        - {name: key, secret: {secretName: web-key, defaultMode: 256, items: [{key: key, path: auth/key}]}}
---
apiVersion: v1
kind: Pod
metadata: {name: web-other}
spec:
  containers: [{name: other, image: web:1}]
---
apiVersion: v1
kind: Pod
metadata:
  name: web-test
  annotations: {helm.sh/hook: "pre-install, test", helm.sh/hook-delete-policy: before-hook-creation}
spec:
  restartPolicy: Never
  securityContext: {runAsNonRoot: true, runAsUser: 10001}
  containers:
    - name: test
      image: web:1
      command: [check]
      args: [--wait, "5", web-0.web:80]
      resources:
        limits: {cpu: 100m, memory: 32Mi}
`

func testCluster(t *testing.T, manifests string) *Cluster {
	t.Helper()
	m, err := ReadManifests(strings.NewReader(manifests))
	if err != nil {
		t.Fatal(err)
	}
	cl := New(Config{Network: "net", NodeRoot: t.TempDir(), Report: func(string) {}}, m)
	cl.imageUser = func(string) (string, error) { return "", nil }
	return cl
}

// webArgs are the docker run arguments of pod web-<ordinal>'s container.
func webArgs(t *testing.T, cl *Cluster, ordinal int) []string {
	t.Helper()
	p := podsOf(&cl.manifests.statefulSets[0], "default")[ordinal]
	volumes, err := prepareVolumes(p, cl.manifests, cl.nodeRoot)
	if err != nil {
		t.Fatal(err)
	}
	args, err := cl.runArgs(p, &p.spec.Containers[0], detached, volumes)
	if err != nil {
		t.Fatal(err)
	}
	return args
}

func wantArgs(t *testing.T, args []string, want ...string) {
	t.Helper()
	if !strings.Contains(" "+strings.Join(args, " ")+" ", " "+strings.Join(want, " ")+" ") {
		t.Errorf("docker %s\nlacks: %s", strings.Join(args, " "), strings.Join(want, " "))
	}
}

func TestReadsOnlyWhatPodsDependOn(t *testing.T) {
	cl := testCluster(t, testManifests)
	m := cl.manifests
	if len(m.statefulSets) != 1 || len(m.services) != 1 || len(m.configMaps) != 1 || len(m.secrets) != 1 ||
		len(m.testPods) != 1 || m.testPods[0].Name != "web-test" {
		t.Errorf("decoded %d StatefulSets, %d Services, %d ConfigMaps, %d Secrets, %d test pods",
			len(m.statefulSets), len(m.services), len(m.configMaps), len(m.secrets), len(m.testPods))
	}
	if strings.Join(m.ignored, ",") != "Pod/web-other" {
		t.Errorf("ignored %v", m.ignored)
	}
}

func TestRefusesUnknownFields(t *testing.T) {
	_, err := ReadManifests(strings.NewReader(strings.Replace(testManifests, "serviceName:", "servicName:", 1)))
	if err == nil || !strings.Contains(err.Error(), "servicName") {
		t.Errorf("got %v, want an error naming servicName", err)
	}
}

func TestRunsPodWithItsIdentityAndDNSNames(t *testing.T) {
	cl := testCluster(t, testManifests)
	p := podsOf(&cl.manifests.statefulSets[0], "default")[1]
	sandbox := cl.sandboxArgs(p)
	wantArgs(t, sandbox, "run", "--name", "web-1-sandbox", "--detach", "--hostname", "web-1",
		"--domainname", "web.default.svc.cluster.local", "--network", "net",
		"--network-alias", "web-1.web", "--network-alias", "web-1.web.default.svc.cluster.local")
	wantArgs(t, sandbox, "--dns-search", "default.svc.cluster.local", "--dns-search", "svc.cluster.local",
		"--dns-search", "cluster.local", "--dns-option", "ndots:5")
	wantArgs(t, sandbox, "--label", "io.kubernetes.container.name=POD")
	wantArgs(t, sandbox, "--expose", "80/tcp")
	wantArgs(t, sandbox, "--entrypoint", "sleep", "web:1", "infinity")

	args := webArgs(t, cl, 1)
	wantArgs(t, args, "--name", "web-1", "--detach", "--restart", "always",
		"--network", "container:web-1-sandbox", "--stop-timeout", "30")
	wantArgs(t, args, "--label", "statefulset.kubernetes.io/pod-name=web-1")
	for _, arg := range []string{"--hostname", "--network-alias", "--dns-search", "--expose"} {
		if slices.Contains(args, arg) {
			t.Errorf("the app container sets %s, which is its sandbox's: %v", arg, args)
		}
	}
}

func TestNoDNSNamesWithoutAHeadlessServiceSelectingThePod(t *testing.T) {
	cl := testCluster(t, strings.Replace(testManifests, "selector: {app: web}", "selector: {app: other}", 1))
	args := cl.sandboxArgs(podsOf(&cl.manifests.statefulSets[0], "default")[0])
	if strings.Contains(strings.Join(args, " "), "--network-alias") {
		t.Errorf("a Service that does not select the pod gave it DNS names: %v", args)
	}
}

func TestFillsEnvironmentAndExpandsReferences(t *testing.T) {
	args := webArgs(t, testCluster(t, testManifests), 0)
	wantArgs(t, args, "--env", "POD_NAME=web-0", "--env", "GREETING=hello web-0 and $(UNDEFINED)")
	wantArgs(t, args, "web:1", "serve", "--name", "web-0", "--literal", "$(POD_NAME)")
}

func TestAppliesLimitsAndSecurityContext(t *testing.T) {
	args := webArgs(t, testCluster(t, testManifests), 0)
	wantArgs(t, args, "--cpus", "0.2", "--memory", "131072000",
		"--memory-swap", "131072000", "--cpu-shares", "204", "--user", "10001:10001",
		"--group-add", "10001", "--read-only", "--security-opt", "no-new-privileges",
		"--cap-drop", "ALL")
}

func TestMountsSecretItemsReadableByFSGroup(t *testing.T) {
	cl := testCluster(t, testManifests)
	args := webArgs(t, cl, 0)
	keyDir := filepath.Join(cl.nodeRoot, "var/lib/kubelet/pods/web-0/volumes/secret/key")
	wantArgs(t, args, "--mount", "type=bind,source="+keyDir+",target=/etc/web-key,readonly")
	file := filepath.Join(keyDir, "auth/key")
	content, err := os.ReadFile(file)
	if err != nil || string(content) != "secret" {
		t.Errorf("auth/key: %q, %v", content, err)
	}
	// defaultMode 0400, and the kubelet adds group read for fsGroup.
	if info, err := os.Stat(file); err != nil || info.Mode().Perm() != 0o440 {
		t.Errorf("auth/key: mode %v, %v; want 0440", info.Mode(), err)
	}
}

func TestMountsConfigMapFilesAndPerPodHostPath(t *testing.T) {
	cl := testCluster(t, testManifests)
	args := webArgs(t, cl, 1)
	configDir := filepath.Join(cl.nodeRoot, "var/lib/kubelet/pods/web-1/volumes/configmap/config")
	wantArgs(t, args, "--mount", "type=bind,source="+configDir+",target=/etc/web,readonly")
	wantArgs(t, args, "--mount", "type=bind,source="+filepath.Join(cl.nodeRoot, "tmp/logs/web-1")+",target=/var/log/web")
	content, err := os.ReadFile(filepath.Join(configDir, "app.yaml"))
	if err != nil || string(content) != "port: 80\n" {
		t.Errorf("app.yaml: %q, %v", content, err)
	}
	if info, err := os.Stat(filepath.Join(cl.nodeRoot, "tmp/logs/web-1")); err != nil || !info.IsDir() {
		t.Errorf("the per-pod log directory was not made: %v", err)
	}
}

func TestRefusesSubPathExprOfAnUndefinedVariable(t *testing.T) {
	cl := testCluster(t, strings.Replace(testManifests, "subPathExpr: $(POD_NAME)", "subPathExpr: $(NODE_NAME)", 1))
	p := podsOf(&cl.manifests.statefulSets[0], "default")[0]
	volumes, err := prepareVolumes(p, cl.manifests, cl.nodeRoot)
	if err != nil {
		t.Fatal(err)
	}
	_, err = cl.runArgs(p, &p.spec.Containers[0], detached, volumes)
	if err == nil || !strings.Contains(err.Error(), "missing value for NODE_NAME") {
		t.Errorf("got %v, want the kubelet's missing value for NODE_NAME", err)
	}
}

func TestRefusesRootUnderRunAsNonRoot(t *testing.T) {
	cl := testCluster(t, strings.Replace(testManifests, "runAsUser: 10001, ", "", 1))
	p := podsOf(&cl.manifests.statefulSets[0], "default")[0]
	if _, err := cl.runArgs(p, &p.spec.Containers[0], detached, nil); err == nil ||
		!strings.Contains(err.Error(), "runAsNonRoot") {
		t.Errorf("got %v, want a refusal naming runAsNonRoot", err)
	}
}

func TestRunsATestPodOnceInTheForeground(t *testing.T) {
	cl := testCluster(t, testManifests)
	p := podOf(&cl.manifests.testPods[0], "default")
	args, err := cl.runArgs(p, &p.spec.Containers[0], foreground, nil)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(args, "--detach") || slices.Contains(args, "--restart") {
		t.Errorf("a test pod runs once, in the foreground: %v", args)
	}
	wantArgs(t, args, "run", "--name", "web-test", "--network", "container:web-test-sandbox")
	wantArgs(t, args, "--label", "pstrain.e2e/network=net")
	wantArgs(t, args, "--cpus", "0.1", "--memory", "33554432")
	wantArgs(t, args, "--user", "10001")
	wantArgs(t, args, "--entrypoint", "check", "web:1", "--wait", "5", "web-0.web:80")
	sandbox := cl.sandboxArgs(p)
	wantArgs(t, sandbox, "--hostname", "web-test", "--network", "net", "--dns-search", "default.svc.cluster.local")
	if slices.Contains(sandbox, "--network-alias") {
		t.Errorf("a pod without a subdomain got DNS names: %v", sandbox)
	}
}

func TestAPodOfASubdomainGetsItsHeadlessServiceNames(t *testing.T) {
	cl := testCluster(t, strings.Replace(testManifests, "  restartPolicy: Never\n", "  restartPolicy: Never\n  hostname: probe\n  subdomain: web\n", 1))
	object := cl.manifests.testPods[0]
	object.Labels = map[string]string{"app": "web"}
	wantArgs(t, cl.sandboxArgs(podOf(&object, "default")), "--hostname", "probe",
		"--domainname", "web.default.svc.cluster.local", "--network", "net", "--network-alias", "probe.web")
}
