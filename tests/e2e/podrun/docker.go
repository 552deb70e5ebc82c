package podrun

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// networkLabel marks every container podrun starts with the Docker network it belongs to.
const networkLabel = "pstrain.e2e/network"

// Cluster is what every pod shares: the Docker network standing in for the cluster network and
// DNS, the namespace, the cluster domain, the node's filesystem root and the rendered manifests;
// and the pods it started, whose probes it runs.
type Cluster struct {
	network       string
	namespace     string
	clusterDomain string
	nodeRoot      string
	manifests     *Manifests
	// imageUser is the USER of an image's configuration ("" is root).
	imageUser func(image string) (string, error)
	report    func(line string)

	mu      sync.Mutex
	started map[string]*pod // the pods Start started, by name
	probes  sync.WaitGroup
}

// runMode is how a container runs.
type runMode int

const (
	// initContainer runs an init container to its end.
	initContainer runMode = iota
	// detached starts an app container in the background, restarted as the pod's restartPolicy
	// says.
	detached
	// foreground runs the app container of a pod that runs once (restartPolicy Never, a helm
	// test) to its end.
	foreground
)

// containerName is the Docker name of a pod's container: the pod's name for its (only) app
// container, so `docker exec <pod>` works as `kubectl exec <pod>` does.
func containerName(p *pod, c *corev1.Container, mode runMode) string {
	if mode == initContainer {
		return p.name + "-init-" + c.Name
	}
	return p.name
}

// sandboxName is the Docker name of a pod's sandbox container, which holds the pod's network
// namespace: its address, hostname and DNS names on the network, and its resolv.conf.
func sandboxName(p *pod) string { return p.name + "-sandbox" }

// sandboxArgs are the `docker run` arguments of the pod's sandbox, as the kubelet's "pause"
// container: every container of the pod joins its network namespace, so init containers and
// the app container, and the app container after a restart, share one address and one set of
// DNS names, which exist from before the first init container until the pod is deleted. It
// sleeps, as the user 65535 of the pause image, in the image of the pod's first container (no
// registry is needed), and exposes the ports of the pod's containers.
func (cl *Cluster) sandboxArgs(p *pod) []string {
	args := []string{"run", "--name", sandboxName(p), "--detach", "--hostname", p.hostname}
	domain, names := p.dns(cl.manifests, cl.clusterDomain)
	if domain != "" {
		args = append(args, "--domainname", domain)
	}
	args = append(args, "--network", cl.network)
	for _, name := range names {
		args = append(args, "--network-alias", name)
	}
	for _, search := range []string{p.namespace + ".svc." + cl.clusterDomain, "svc." + cl.clusterDomain, cl.clusterDomain} {
		args = append(args, "--dns-search", search)
	}
	args = append(args, "--dns-option", "ndots:5")
	args = append(args, cl.labelArgs(p, "POD")...)
	for _, c := range p.spec.Containers {
		for _, port := range c.Ports {
			protocol := strings.ToLower(string(port.Protocol))
			if protocol == "" {
				protocol = "tcp"
			}
			args = append(args, "--expose", fmt.Sprintf("%d/%s", port.ContainerPort, protocol))
		}
	}
	args = append(args, "--user", "65535:65535", "--read-only", "--cap-drop", "ALL",
		"--security-opt", "no-new-privileges", "--memory", "16m", "--entrypoint", "sleep",
		p.spec.Containers[0].Image, "infinity")
	return args
}

// runArgs are the `docker run` arguments that start container c of pod p as the kubelet would:
// in the pod's sandbox (its network, hostname and DNS), with the container's environment
// (downward API filled in), command, resource limits, security context and volume mounts. An app container is detached and
// restarted by Docker as the pod's restartPolicy says, or runs in the foreground; an init
// container runs to its end.
func (cl *Cluster) runArgs(p *pod, c *corev1.Container, mode runMode, volumes map[string]volume) ([]string, error) {
	if len(c.EnvFrom) > 0 || c.Lifecycle != nil || c.RestartPolicy != nil || len(c.VolumeDevices) > 0 {
		return nil, fmt.Errorf("pod %s, container %s: envFrom, lifecycle, restartPolicy and volumeDevices are not simulated", p.name, c.Name)
	}
	if err := checkProbes(p, c); err != nil {
		return nil, err
	}
	args := []string{"run", "--name", containerName(p, c, mode)}
	if mode == detached {
		args = append(args, "--detach", "--restart", dockerRestartPolicy(p.spec.RestartPolicy))
	}
	args = append(args, "--network", "container:"+sandboxName(p))
	args = append(args, "--stop-timeout", strconv.FormatInt(p.gracePeriod(), 10))
	args = append(args, cl.labelArgs(p, c.Name)...)

	env := map[string]string{}
	for _, e := range c.Env {
		value := expand(e.Value, fromEnv(env))
		if e.ValueFrom != nil {
			if e.ValueFrom.FieldRef == nil {
				return nil, fmt.Errorf("pod %s, env %s: only fieldRef is simulated in valueFrom", p.name, e.Name)
			}
			var err error
			if value, err = p.field(e.ValueFrom.FieldRef.FieldPath); err != nil {
				return nil, err
			}
		}
		env[e.Name] = value
		args = append(args, "--env", e.Name+"="+value)
	}
	args = append(args, resourceArgs(c.Resources)...)
	security, err := cl.securityArgs(p, c)
	if err != nil {
		return nil, err
	}
	args = append(args, security...)
	for _, mount := range c.VolumeMounts {
		v, found := volumes[mount.Name]
		if !found {
			return nil, fmt.Errorf("pod %s: volume mount %s names no volume", p.name, mount.Name)
		}
		source := v.dir
		subPath := mount.SubPath
		if mount.SubPathExpr != "" {
			if subPath, err = expandSubPath(mount.SubPathExpr, env); err != nil {
				return nil, fmt.Errorf("pod %s, container %s, volume mount %s: %w", p.name, c.Name, mount.Name, err)
			}
		}
		if subPath != "" {
			if source, err = subPathDir(v.dir, subPath); err != nil {
				return nil, fmt.Errorf("pod %s, volume mount %s: %w", p.name, mount.Name, err)
			}
		}
		spec := "type=bind,source=" + source + ",target=" + mount.MountPath
		if mount.ReadOnly || v.readOnly {
			spec += ",readonly"
		}
		args = append(args, "--mount", spec)
	}
	if c.WorkingDir != "" {
		args = append(args, "--workdir", c.WorkingDir)
	}

	command := expandAll(c.Command, env)
	if len(command) > 0 {
		args = append(args, "--entrypoint", command[0], c.Image)
		args = append(args, command[1:]...)
	} else {
		args = append(args, c.Image)
	}
	return append(args, expandAll(c.Args, env)...), nil
}

// labelArgs are the labels of every container of the pod: the pod's, the network's (for down),
// the kubelet's pod name and namespace, and the container's name ("POD" for the sandbox).
func (cl *Cluster) labelArgs(p *pod, container string) []string {
	var args []string
	podLabels := maps.Clone(p.labels)
	podLabels[networkLabel] = cl.network
	podLabels["io.kubernetes.pod.name"] = p.name
	podLabels["io.kubernetes.pod.namespace"] = p.namespace
	podLabels["io.kubernetes.container.name"] = container
	for _, key := range slices.Sorted(maps.Keys(podLabels)) {
		args = append(args, "--label", key+"="+podLabels[key])
	}
	return args
}

// resourceArgs are the cgroup limits the kubelet sets: the CPU limit as a CFS quota, the memory
// limit without swap, and the CPU request (the limit when unset) as CPU shares.
func resourceArgs(r corev1.ResourceRequirements) []string {
	var args []string
	if cpu, found := r.Limits[corev1.ResourceCPU]; found {
		args = append(args, "--cpus", strconv.FormatFloat(float64(cpu.MilliValue())/1000, 'f', -1, 64))
	}
	if memory, found := r.Limits[corev1.ResourceMemory]; found {
		bytes := strconv.FormatInt(memory.Value(), 10)
		args = append(args, "--memory", bytes, "--memory-swap", bytes)
	}
	cpuRequest, found := r.Requests[corev1.ResourceCPU]
	if !found {
		cpuRequest, found = r.Limits[corev1.ResourceCPU]
	}
	if found {
		args = append(args, "--cpu-shares", strconv.FormatInt(max(2, cpuRequest.MilliValue()*1024/1000), 10))
	}
	return args
}

// securityArgs apply the pod's and the container's security contexts (the container's wins).
// As the kubelet, it refuses to start a container that has runAsNonRoot and would run as root,
// or as a user name it cannot check.
func (cl *Cluster) securityArgs(p *pod, c *corev1.Container) ([]string, error) {
	podContext := p.spec.SecurityContext
	if podContext == nil {
		podContext = &corev1.PodSecurityContext{}
	}
	context := c.SecurityContext
	if context == nil {
		context = &corev1.SecurityContext{}
	}
	runAsUser := firstSet(context.RunAsUser, podContext.RunAsUser)
	runAsGroup := firstSet(context.RunAsGroup, podContext.RunAsGroup)
	runAsNonRoot := firstSet(context.RunAsNonRoot, podContext.RunAsNonRoot)

	user := ""
	if runAsUser != nil {
		user = strconv.FormatInt(*runAsUser, 10)
	} else if runAsGroup != nil || (runAsNonRoot != nil && *runAsNonRoot) {
		imageUser, err := cl.imageUser(c.Image)
		if err != nil {
			return nil, err
		}
		user, _, _ = strings.Cut(imageUser, ":")
	}
	if runAsNonRoot != nil && *runAsNonRoot {
		uid, err := strconv.ParseInt(user, 10, 64)
		if err != nil || uid == 0 {
			return nil, fmt.Errorf("pod %s, container %s: runAsNonRoot is set but the user %q is root or not numeric", p.name, c.Name, user)
		}
	}
	var args []string
	if runAsGroup != nil {
		if user == "" {
			user = "0"
		}
		user += ":" + strconv.FormatInt(*runAsGroup, 10)
	}
	if user != "" {
		args = append(args, "--user", user)
	}
	groups := slices.Clone(podContext.SupplementalGroups)
	if podContext.FSGroup != nil {
		groups = append(groups, *podContext.FSGroup)
	}
	for _, group := range groups {
		args = append(args, "--group-add", strconv.FormatInt(group, 10))
	}

	if context.Privileged != nil && *context.Privileged {
		args = append(args, "--privileged")
	}
	if context.ReadOnlyRootFilesystem != nil && *context.ReadOnlyRootFilesystem {
		args = append(args, "--read-only")
	}
	if context.AllowPrivilegeEscalation != nil && !*context.AllowPrivilegeEscalation {
		args = append(args, "--security-opt", "no-new-privileges")
	}
	if context.Capabilities != nil {
		for _, capability := range context.Capabilities.Drop {
			args = append(args, "--cap-drop", string(capability))
		}
		for _, capability := range context.Capabilities.Add {
			args = append(args, "--cap-add", string(capability))
		}
	}
	// The kubelet's default is Unconfined; RuntimeDefault is Docker's default profile.
	profile := firstSet(context.SeccompProfile, podContext.SeccompProfile)
	switch {
	case profile == nil || profile.Type == corev1.SeccompProfileTypeUnconfined:
		args = append(args, "--security-opt", "seccomp=unconfined")
	case profile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		return nil, fmt.Errorf("pod %s: seccomp profile %s is not simulated", p.name, profile.Type)
	}
	return args, nil
}

// dockerRestartPolicy is Docker's policy for a pod's restartPolicy.
func dockerRestartPolicy(policy corev1.RestartPolicy) string {
	switch policy {
	case corev1.RestartPolicyNever:
		return "no"
	case corev1.RestartPolicyOnFailure:
		return "on-failure"
	}
	return "always"
}

func firstSet[T any](values ...*T) *T {
	for _, v := range values {
		if v != nil {
			return v
		}
	}
	return nil
}

// expand replaces each reference $(NAME) as the kubelet does in env values, command, args and
// subPathExpr: with the value lookup gives, or leaves it as it is when lookup finds none; $$ is
// a literal $.
func expand(s string, lookup func(name string) (string, bool)) string {
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			out.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			out.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				out.WriteString(s[i:])
				return out.String()
			}
			if value, found := lookup(s[i+2 : i+2+end]); found {
				out.WriteString(value)
			} else {
				out.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			out.WriteByte('$')
		}
	}
	return out.String()
}

// fromEnv looks a name up in env: an undefined variable's reference stays as it is.
func fromEnv(env map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		value, found := env[name]
		return value, found
	}
}

func expandAll(values []string, env map[string]string) []string {
	expanded := make([]string, len(values))
	for i, v := range values {
		expanded[i] = expand(v, fromEnv(env))
	}
	return expanded
}

// expandSubPath expands a subPathExpr with the container's environment. Unlike elsewhere, the
// kubelet refuses a reference to a variable the container does not define, or defines empty
// ("missing value for …"), and the container does not start.
func expandSubPath(expr string, env map[string]string) (string, error) {
	var missing []string
	expanded := expand(expr, func(name string) (string, bool) {
		if env[name] == "" {
			missing = append(missing, name)
		}
		return env[name], true
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("subPathExpr %q: missing value for %s", expr, strings.Join(missing, ", "))
	}
	return expanded, nil
}
