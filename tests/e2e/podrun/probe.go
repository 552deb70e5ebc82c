package podrun

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Probe kinds, as podrun reports them.
const (
	liveness  = "liveness"
	readiness = "readiness"
)

// checkProbes refuses the probes podrun does not run: startup and gRPC probes.
func checkProbes(p *pod, c *corev1.Container) error {
	if c.StartupProbe != nil {
		return fmt.Errorf("pod %s: startup probes are not simulated", p.name)
	}
	for _, probe := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe} {
		if probe != nil && probe.GRPC != nil {
			return fmt.Errorf("pod %s: gRPC probes are not simulated", p.name)
		}
	}
	return nil
}

// probeLoop runs one probe of the pod's app container as the kubelet does, until ctx ends:
// after initialDelaySeconds, every periodSeconds, each attempt limited to timeoutSeconds, from
// the node to the pod's address (its sandbox's). A readiness probe makes the pod ready after
// successThreshold successes in a row and not ready after failureThreshold failures in a row; a
// liveness probe restarts the container after failureThreshold failures in a row. Transitions, liveness
// failures and restarts are reported.
func (cl *Cluster) probeLoop(ctx context.Context, p *pod, c *corev1.Container, kind string, probe *corev1.Probe) {
	period := time.Duration(orDefault(probe.PeriodSeconds, 10)) * time.Second
	timeout := time.Duration(orDefault(probe.TimeoutSeconds, 1)) * time.Second
	failureThreshold := orDefault(probe.FailureThreshold, 3)
	successThreshold := orDefault(probe.SuccessThreshold, 1)
	initialDelay := time.Duration(probe.InitialDelaySeconds) * time.Second
	wait := initialDelay
	failures, successes, ready := int32(0), int32(0), false
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = period
		err := cl.probeOnce(ctx, p, c, &probe.ProbeHandler, timeout)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			failures, successes = 0, successes+1
		} else {
			failures, successes = failures+1, 0
		}
		switch {
		case kind == readiness && !ready && successes >= successThreshold:
			ready = true
			p.markReady()
			cl.say("%s: ready", p.name)
		case kind == readiness && ready && failures >= failureThreshold:
			ready = false
			p.readyNow.Store(false)
			cl.say("%s: not ready: readiness probe failed %d times in a row: %v", p.name, failures, err)
		case kind == liveness && err != nil:
			cl.say("%s: liveness probe failed (%d of %d): %v", p.name, failures, failureThreshold, err)
			if failures >= failureThreshold {
				restarts := p.restarts.Add(1)
				cl.say("%s: restarting the container after %d liveness failures in a row (restart %d)", p.name, failures, restarts)
				if _, err := docker("restart", "--time", strconv.FormatInt(p.gracePeriod(), 10), p.name); err != nil {
					cl.say("%s: %v", p.name, err)
				}
				failures, wait = 0, initialDelay
			}
		}
	}
}

var probeClient = &http.Client{
	// The kubelet does not verify a probed pod's certificate.
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true},
}

// probeOnce runs a probe's handler once: an HTTP GET answering 2xx or 3xx, a TCP connection
// that opens, or a command (run with docker exec) that exits 0.
func (cl *Cluster) probeOnce(ctx context.Context, p *pod, c *corev1.Container, handler *corev1.ProbeHandler, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if handler.Exec != nil {
		out, err := exec.CommandContext(ctx, "docker", append([]string{"exec", p.name}, handler.Exec.Command...)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	var host string
	var port intstr.IntOrString
	switch {
	case handler.HTTPGet != nil:
		host, port = handler.HTTPGet.Host, handler.HTTPGet.Port
	case handler.TCPSocket != nil:
		host, port = handler.TCPSocket.Host, handler.TCPSocket.Port
	}
	if host == "" {
		out, err := docker("inspect", "--format", fmt.Sprintf("{{(index .NetworkSettings.Networks %q).IPAddress}}", cl.network), sandboxName(p))
		if err != nil {
			return err
		}
		host = strings.TrimSpace(out)
	}
	portNumber, err := containerPort(c, port)
	if err != nil {
		return err
	}
	address := net.JoinHostPort(host, strconv.Itoa(portNumber))
	if handler.TCPSocket != nil {
		connection, err := (&net.Dialer{}).DialContext(ctx, "tcp", address)
		if err == nil {
			connection.Close()
		}
		return err
	}
	scheme := strings.ToLower(string(handler.HTTPGet.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	request, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+address+handler.HTTPGet.Path, nil)
	if err != nil {
		return err
	}
	for _, header := range handler.HTTPGet.HTTPHeaders {
		request.Header.Add(header.Name, header.Value)
	}
	response, err := probeClient.Do(request)
	if err != nil {
		return err
	}
	response.Body.Close()
	if response.StatusCode < 200 || response.StatusCode >= 400 {
		return fmt.Errorf("GET %s: HTTP %d", request.URL, response.StatusCode)
	}
	return nil
}

// containerPort is a probe's port: a number, or the name of one of the container's ports.
func containerPort(c *corev1.Container, port intstr.IntOrString) (int, error) {
	if port.Type == intstr.Int {
		return port.IntValue(), nil
	}
	for _, p := range c.Ports {
		if p.Name == port.StrVal {
			return int(p.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("container %s has no port named %q", c.Name, port.StrVal)
}

// orDefault is an unset (zero) probe field's API default.
func orDefault(value, defaultValue int32) int32 {
	if value == 0 {
		return defaultValue
	}
	return value
}
