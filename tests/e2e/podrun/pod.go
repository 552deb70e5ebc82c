package podrun

import (
	"fmt"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// pod is one pod: of a StatefulSet, as the StatefulSet controller creates it from the template,
// or a Pod of the manifests (a helm test hook).
type pod struct {
	name      string
	namespace string
	// hostname and subdomain are the pod's DNS identity: a StatefulSet's pod has the hostname
	// <pod> and the subdomain <serviceName>, another pod its spec.hostname (or its name) and
	// spec.subdomain.
	hostname    string
	subdomain   string
	labels      map[string]string
	annotations map[string]string
	spec        *corev1.PodSpec

	ready     chan struct{} // closed when the pod is first ready
	readyOnce sync.Once
	readyNow  atomic.Bool  // the readiness probe's verdict now
	restarts  atomic.Int32 // restarts after failed liveness probes
}

// podsOf returns the pods of a StatefulSet: <name>-0 … <name>-<replicas-1>.
func podsOf(set *appsv1.StatefulSet, namespace string) []*pod {
	replicas := 1
	if set.Spec.Replicas != nil {
		replicas = int(*set.Spec.Replicas)
	}
	pods := make([]*pod, 0, replicas)
	for ordinal := range replicas {
		name := fmt.Sprintf("%s-%d", set.Name, ordinal)
		podLabels := maps.Clone(set.Spec.Template.Labels)
		if podLabels == nil {
			podLabels = map[string]string{}
		}
		podLabels[appsv1.StatefulSetPodNameLabel] = name
		podLabels[appsv1.PodIndexLabel] = strconv.Itoa(ordinal)
		pods = append(pods, &pod{name: name, namespace: namespace, hostname: name,
			subdomain: set.Spec.ServiceName, labels: podLabels,
			annotations: set.Spec.Template.Annotations, spec: &set.Spec.Template.Spec,
			ready: make(chan struct{})})
	}
	return pods
}

// podOf returns a Pod of the manifests, in its own namespace or else in namespace.
func podOf(object *corev1.Pod, namespace string) *pod {
	if object.Namespace != "" {
		namespace = object.Namespace
	}
	hostname := object.Spec.Hostname
	if hostname == "" {
		hostname = object.Name
	}
	podLabels := maps.Clone(object.Labels)
	if podLabels == nil {
		podLabels = map[string]string{}
	}
	return &pod{name: object.Name, namespace: namespace, hostname: hostname,
		subdomain: object.Spec.Subdomain, labels: podLabels, annotations: object.Annotations,
		spec: &object.Spec, ready: make(chan struct{})}
}

// markReady records that the pod is ready: its readiness probe succeeded, or it has none.
func (p *pod) markReady() {
	p.readyNow.Store(true)
	p.readyOnce.Do(func() { close(p.ready) })
}

// gracePeriod is the pod's terminationGracePeriodSeconds.
func (p *pod) gracePeriod() int64 {
	if p.spec.TerminationGracePeriodSeconds != nil {
		return *p.spec.TerminationGracePeriodSeconds
	}
	return corev1.DefaultTerminationGracePeriodSeconds
}

// field is the value of a downward-API field reference.
func (p *pod) field(path string) (string, error) {
	switch path {
	case "metadata.name":
		return p.name, nil
	case "metadata.namespace":
		return p.namespace, nil
	}
	return "", fmt.Errorf("pod %s: the downward-API field %q is not simulated", p.name, path)
}

// dns is how the cluster DNS knows a pod: the pod's domain (its FQDN minus its hostname, empty
// when it has none) and every name that resolves to it. The names exist when a headless Service
// named after the pod's subdomain selects the pod.
func (p *pod) dns(m *Manifests, clusterDomain string) (domain string, names []string) {
	if p.subdomain == "" {
		return "", nil
	}
	service, found := m.services[p.subdomain]
	if !found || service.Spec.ClusterIP != corev1.ClusterIPNone ||
		len(service.Spec.Selector) == 0 ||
		!labels.SelectorFromSet(service.Spec.Selector).Matches(labels.Set(p.labels)) {
		return "", nil
	}
	serviceFQDN := fmt.Sprintf("%s.%s.svc.%s", service.Name, p.namespace, clusterDomain)
	names = []string{
		p.hostname + "." + service.Name, p.hostname + "." + serviceFQDN, // the pod's own record
		service.Name, serviceFQDN, // the headless Service: every pod it selects
	}
	return serviceFQDN, names
}
