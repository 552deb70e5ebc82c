package podrun

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// volume is a pod volume made ready on the node: the directory that gets bind-mounted.
type volume struct {
	dir      string
	readOnly bool
}

// prepareVolumes makes the pod's volumes on the node as the kubelet does, under nodeRoot:
// a configMap or secret volume is a directory of files, one per key; a hostPath volume is
// nodeRoot+path; an emptyDir is a new world-writable directory. Other volume types are refused.
func prepareVolumes(p *pod, m *Manifests, nodeRoot string) (map[string]volume, error) {
	volumes := map[string]volume{}
	var fsGroup *int64
	if p.spec.SecurityContext != nil {
		fsGroup = p.spec.SecurityContext.FSGroup
	}
	podDir := filepath.Join(nodeRoot, "var/lib/kubelet/pods", p.name, "volumes")
	for _, v := range p.spec.Volumes {
		var err error
		switch {
		case v.ConfigMap != nil:
			dir := filepath.Join(podDir, "configmap", v.Name)
			err = writeConfigMap(dir, v.ConfigMap, m, fsGroup)
			volumes[v.Name] = volume{dir, true}
		case v.Secret != nil:
			dir := filepath.Join(podDir, "secret", v.Name)
			err = writeSecret(dir, v.Secret, m, fsGroup)
			volumes[v.Name] = volume{dir, true}
		case v.HostPath != nil:
			dir := filepath.Join(nodeRoot, v.HostPath.Path)
			err = makeHostPath(dir, v.HostPath.Type)
			volumes[v.Name] = volume{dir, false}
		case v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumDefault:
			dir := filepath.Join(podDir, "empty-dir", v.Name)
			err = makeDir(dir, 0o777, fsGroup)
			volumes[v.Name] = volume{dir, false}
		default:
			err = fmt.Errorf("the volume's type is not simulated (configMap, hostPath and emptyDir are)")
		}
		if err != nil {
			return nil, fmt.Errorf("pod %s, volume %s: %w", p.name, v.Name, err)
		}
	}
	return volumes, nil
}

// writeConfigMap writes a configMap volume's files.
func writeConfigMap(dir string, source *corev1.ConfigMapVolumeSource, m *Manifests, fsGroup *int64) error {
	configMap, found := m.configMaps[source.Name]
	if !found && (source.Optional == nil || !*source.Optional) {
		return fmt.Errorf("ConfigMap %s is not in the manifests", source.Name)
	}
	contents := map[string][]byte{}
	for key, value := range configMap.Data {
		contents[key] = []byte(value)
	}
	maps.Copy(contents, configMap.BinaryData)
	mode := firstSet(source.DefaultMode, ptr(int32(corev1.ConfigMapVolumeSourceDefaultMode)))
	return writeKeys(dir, "ConfigMap "+source.Name, contents, source.Items, *mode, fsGroup)
}

// writeSecret writes a secret volume's files.
func writeSecret(dir string, source *corev1.SecretVolumeSource, m *Manifests, fsGroup *int64) error {
	secret, found := m.secrets[source.SecretName]
	if !found && (source.Optional == nil || !*source.Optional) {
		return fmt.Errorf("Secret %s is not in the manifests", source.SecretName)
	}
	contents := maps.Clone(secret.Data)
	if contents == nil {
		contents = map[string][]byte{}
	}
	for key, value := range secret.StringData {
		contents[key] = []byte(value)
	}
	mode := firstSet(source.DefaultMode, ptr(int32(corev1.SecretVolumeSourceDefaultMode)))
	return writeKeys(dir, "Secret "+source.SecretName, contents, source.Items, *mode, fsGroup)
}

// writeKeys writes one file per key (or per item, when items are given) with its mode; with
// fsGroup, group-owned by it and group-readable.
func writeKeys(dir, source string, contents map[string][]byte, items []corev1.KeyToPath, mode int32, fsGroup *int64) error {
	if len(items) == 0 {
		for key := range contents {
			items = append(items, corev1.KeyToPath{Key: key, Path: key})
		}
	}
	if err := makeDir(dir, 0o755, nil); err != nil {
		return err
	}
	for _, item := range items {
		content, found := contents[item.Key]
		if !found {
			return fmt.Errorf("%s has no key %s", source, item.Key)
		}
		if err := checkRelative(item.Path); err != nil {
			return err
		}
		file := filepath.Join(dir, item.Path)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(file, content, 0o600); err != nil {
			return err
		}
		fileMode := os.FileMode(*firstSet(item.Mode, &mode))
		if fsGroup != nil { // as the kubelet makes a read-only volume's files readable by fsGroup
			fileMode |= 0o440
		}
		if err := setOwnership(file, fileMode, fsGroup); err != nil {
			return err
		}
	}
	return nil
}

func ptr[T any](value T) *T { return &value }

// makeHostPath checks or creates a hostPath volume's directory by its type. An unset type is
// not checked by the kubelet; the container runtime then creates a missing directory.
func makeHostPath(dir string, hostPathType *corev1.HostPathType) error {
	kind := corev1.HostPathUnset
	if hostPathType != nil {
		kind = *hostPathType
	}
	switch kind {
	case corev1.HostPathUnset, corev1.HostPathDirectoryOrCreate:
		return os.MkdirAll(dir, 0o755)
	case corev1.HostPathDirectory:
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			return fmt.Errorf("hostPath %s is not a directory", dir)
		}
		return nil
	}
	return fmt.Errorf("hostPath type %q is not simulated", kind)
}

// subPathDir is the source of a mount with a subPath: the kubelet creates a missing
// sub-directory, owned by itself, with the mode of the volume's directory.
func subPathDir(base, subPath string) (string, error) {
	if err := checkRelative(subPath); err != nil {
		return "", err
	}
	dir := filepath.Join(base, subPath)
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	info, err := os.Stat(base)
	if err != nil {
		return "", err
	}
	return dir, makeDir(dir, info.Mode().Perm(), nil)
}

// checkRelative refuses what the API server refuses in a subPath or a key's path.
func checkRelative(path string) error {
	if filepath.IsAbs(path) || slices.Contains(strings.Split(path, "/"), "..") {
		return fmt.Errorf("path %q must be relative and must not contain '..'", path)
	}
	return nil
}

// makeDir creates dir with exactly mode perm; with fsGroup, group-owned by it and setgid,
// as the kubelet leaves a volume it applies fsGroup to.
func makeDir(dir string, perm os.FileMode, fsGroup *int64) error {
	if err := os.MkdirAll(dir, perm); err != nil {
		return err
	}
	if fsGroup != nil {
		perm |= os.ModeSetgid | 0o070
	}
	return setOwnership(dir, perm, fsGroup)
}

// setOwnership sets a file's mode and, with fsGroup, its group.
func setOwnership(path string, mode os.FileMode, fsGroup *int64) error {
	if fsGroup != nil {
		if err := os.Chown(path, -1, int(*fsGroup)); err != nil {
			return err
		}
	}
	return os.Chmod(path, mode)
}
