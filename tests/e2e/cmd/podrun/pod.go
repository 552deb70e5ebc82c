package main

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

// pod is one pod of a StatefulSet, as the StatefulSet controller creates it from the template.
type pod struct {
	name      string
	namespace string
	set       *appsv1.StatefulSet
	labels    map[string]string
	spec      *corev1.PodSpec

	ready     chan struct{} // closed when the pod is first ready
	readyOnce sync.Once
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
		pods = append(pods, &pod{name: name, namespace: namespace, set: set, labels: podLabels,
			spec: &set.Spec.Template.Spec, ready: make(chan struct{})})
	}
	return pods
}

// markReady records that the pod is ready: its readiness probe succeeded, or it has none.
func (p *pod) markReady() { p.readyOnce.Do(func() { close(p.ready) }) }

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

// dns is how the cluster DNS knows a pod: the pod's subdomain (its FQDN minus its hostname, empty
// when it has none) and every name that resolves to it. A StatefulSet's pod has the hostname
// <pod> and the subdomain <serviceName>; the names exist when a headless Service of that name
// selects the pod.
func (p *pod) dns(m *manifests, clusterDomain string) (subdomain string, names []string) {
	service, found := m.services[p.set.Spec.ServiceName]
	if !found || service.Spec.ClusterIP != corev1.ClusterIPNone ||
		len(service.Spec.Selector) == 0 ||
		!labels.SelectorFromSet(service.Spec.Selector).Matches(labels.Set(p.labels)) {
		return "", nil
	}
	serviceFQDN := fmt.Sprintf("%s.%s.svc.%s", service.Name, p.namespace, clusterDomain)
	names = []string{
		p.name + "." + service.Name, p.name + "." + serviceFQDN, // the pod's own record
		service.Name, serviceFQDN, // the headless Service: every pod it selects
	}
	return serviceFQDN, names
}
