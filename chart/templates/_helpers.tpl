{{/*
Helpers taking a component take a dict: (dict "ctx" $ "component" "ps"). The component is the
role ("ps" or "worker") or another part of the release ("config", "test"); for a role it is also
the key of its values, the name of its port and the suffix of its StatefulSet and Service.
*/}}

{{/*
pstrain.fail refuses the values with one line naming the key. helm lint turns a template's fail
into an [INFO] line and renders on; there the include of a template that does not exist, named
after the same line, makes it an error all the same.
*/}}
{{- define "pstrain.fail" -}}
{{- fail . }}
{{- include (printf "values refused: %s" .) dict }}
{{- end }}

{{/* pstrain.name is the value of the app.kubernetes.io/name label: nameOverride, else the chart's name. */}}
{{- define "pstrain.name" -}}
{{- .Values.nameOverride | default .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* pstrain.chart is the value of the helm.sh/chart label. */}}
{{- define "pstrain.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
pstrain.fullname is the prefix of every name: fullnameOverride, else the release name. It is
never truncated: the daemon reads its role and ordinal from pod names <prefix>-<role>-<n>, and
peers are <prefix>-ps-<n>.<prefix>-ps in DNS. So it must be a DNS-1035 label (Service names
are), and every name derived from it at most 52 characters: the StatefulSet controller labels
pods with <name>-<10-character hash>, which must fit in 63.
*/}}
{{- define "pstrain.fullname" -}}
{{- $prefix := .Values.fullnameOverride | default .Release.Name }}
{{- $source := "release name" }}
{{- $instead := ": install under another name, or set fullnameOverride" }}
{{- if .Values.fullnameOverride }}
{{- $source = "fullnameOverride" }}
{{- $instead = "" }}
{{- end }}
{{- if not (regexMatch "^[a-z]([-a-z0-9]*[a-z0-9])?$" $prefix) }}
{{- include "pstrain.fail" (printf "%s %q cannot prefix the pods' names, which must be DNS-1035 labels: lower-case letters, digits and '-', starting with a letter%s" $source $prefix $instead) }}
{{- end }}
{{- range $component := list "ps" "worker" "config" "auth" "test" "metrics" }}
{{- $name := printf "%s-%s" $prefix $component }}
{{- if gt (len $name) 52 }}
{{- include "pstrain.fail" (printf "%s %q is too long: %q must be at most 52 characters, so the %s at most 44%s" $source $prefix $name $source $instead) }}
{{- end }}
{{- end }}
{{- $prefix }}
{{- end }}

{{/*
pstrain.componentName is <prefix>-<component>, e.g. mnist-ps (see pstrain.fullname).
*/}}
{{- define "pstrain.componentName" -}}
{{- printf "%s-%s" (include "pstrain.fullname" .ctx) .component }}
{{- end }}

{{/* pstrain.selectorLabels select one component of one release, so ps and worker never overlap. */}}
{{- define "pstrain.selectorLabels" -}}
app.kubernetes.io/name: {{ include "pstrain.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* pstrain.ownLabels are the chart's own labels of every resource and pod. */}}
{{- define "pstrain.ownLabels" -}}
helm.sh/chart: {{ include "pstrain.chart" .ctx }}
{{ include "pstrain.selectorLabels" . }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
{{- end }}

{{/*
pstrain.labels are the labels of every resource: the chart's own, then (dict "ctx" $ "component"
… "labels" …) the resource's own labels from values if any, then commonLabels; the first of a
name wins. Never in selectors or claim templates, which helm upgrade cannot change. The chart's
own come first as they always were, so that without extra labels the ConfigMap, and so the pods'
checksum/config, stays the same.
*/}}
{{- define "pstrain.labels" -}}
{{- $own := include "pstrain.ownLabels" . }}
{{- $extra := merge (deepCopy (.labels | default dict)) (deepCopy (.ctx.Values.commonLabels | default dict)) }}
{{- range $name, $_ := $own | fromYaml }}
{{- $_ := unset $extra $name }}
{{- end }}
{{- $own }}
{{- with $extra }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
pstrain.podLabels are the labels of a pod: the chart's own, then the role's podLabels (ps, worker),
then podLabels, then commonLabels.
*/}}
{{- define "pstrain.podLabels" -}}
{{- $role := index .ctx.Values .component | default dict }}
{{- $labels := merge (deepCopy ($role.podLabels | default dict)) (deepCopy (.ctx.Values.podLabels | default dict)) }}
{{- include "pstrain.labels" (merge (dict "labels" $labels) .) }}
{{- end }}

{{/*
pstrain.podSecurityContext is podSecurityContext, without runAsUser, runAsGroup and fsGroup where
global.compatibility.openshift.adaptSecurityContext says so: OpenShift's restricted SCC assigns
them from the namespace's range and refuses others.
*/}}
{{- define "pstrain.podSecurityContext" -}}
{{- $context := deepCopy (.Values.podSecurityContext | default dict) }}
{{- $adapt := .Values.global.compatibility.openshift.adaptSecurityContext }}
{{- if or (eq $adapt "force") (and (eq $adapt "auto") (.Capabilities.APIVersions.Has "security.openshift.io/v1")) }}
{{- $context = omit $context "runAsUser" "runAsGroup" "fsGroup" }}
{{- end }}
{{- toYaml $context }}
{{- end }}

{{/*
pstrain.image is a role's image reference, [registry/]repository@digest or
[registry/]repository:tag: the registry global.imageRegistry, else image.registry; the role's
repository, else image's; the role's own digest or tag, else image's digest or tag, else the
chart's appVersion as the tag.
*/}}
{{- define "pstrain.image" -}}
{{- $shared := .ctx.Values.image }}
{{- $own := (index .ctx.Values .component).image }}
{{- $repository := $own.repository | default $shared.repository }}
{{- $key := ternary (printf "%s.image.repository" .component) "image.repository" (not (empty $own.repository)) }}
{{- if contains "@" $repository }}
{{- include "pstrain.fail" (printf "%s %q holds a digest: give the repository alone, and the digest as %s" $key $repository (replace "repository" "digest" $key)) }}
{{- end }}
{{- with .ctx.Values.global.imageRegistry | default $shared.registry }}
{{- $repository = printf "%s/%s" (trimSuffix "/" .) $repository }}
{{- end }}
{{- $pin := $own }}
{{- if not (or $own.digest $own.tag) }}
{{- $pin = $shared }}
{{- end }}
{{- if $pin.digest }}
{{- printf "%s@%s" $repository $pin.digest }}
{{- else }}
{{- printf "%s:%s" $repository ($pin.tag | default .ctx.Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/* pstrain.imagePullPolicy is a role's image pull policy, else image's. */}}
{{- define "pstrain.imagePullPolicy" -}}
{{- (index .ctx.Values .component).image.pullPolicy | default .ctx.Values.image.pullPolicy }}
{{- end }}

{{/*
pstrain.resources are a role's limits and requests: limit, overridden per resource by
resources.limits (the distributed-tensorflow spelling); request, overridden by
resources.requests, and each request left out takes its limit's value. A request above its limit
is refused here rather than by the API server.
*/}}
{{- define "pstrain.resources" -}}
{{- $key := .component }}
{{- $role := index .ctx.Values $key }}
{{- if gt ($role.gpuCount | default 0 | int64) 0 }}
{{- include "pstrain.fail" (printf "%s.gpuCount %v: pstrain trains on CPUs and uses no GPU; remove it (a GPU can still be reserved as an extended resource, %s.limit.nvidia.com/gpu)" $key $role.gpuCount $key) }}
{{- end }}
{{- $given := $role.resources | default dict }}
{{- $limits := merge (deepCopy ($given.limits | default dict)) (deepCopy ($role.limit | default dict)) }}
{{- $requests := merge (deepCopy ($given.requests | default dict)) (deepCopy ($role.request | default dict)) $limits }}
{{- range $name, $request := $requests }}
{{- if hasKey $limits $name }}
{{- $limit := index $limits $name }}
{{- if gt (include "pstrain.quantity" $request | float64) (include "pstrain.quantity" $limit | float64) }}
{{- include "pstrain.fail" (printf "%s.request.%s %v is above %s.limit.%s %v: a request must not exceed its limit" $key $name $request $key $name $limit) }}
{{- end }}
{{- end }}
{{- end }}
{{- $resources := dict }}
{{- with $limits }}
{{- $_ := set $resources "limits" . }}
{{- end }}
{{- with $requests }}
{{- $_ := set $resources "requests" . }}
{{- end }}
{{- toYaml $resources }}
{{- end }}

{{/*
pstrain.quantity is the value of a Kubernetes quantity (500m, 1.5, 125Mi, 1e3) as a number, to
compare two of them; the schema has checked its form.
*/}}
{{- define "pstrain.quantity" -}}
{{- $text := toString . }}
{{- $number := regexFind "^[+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?" $text }}
{{- $factors := dict "" 1.0 "n" 1e-9 "u" 1e-6 "m" 1e-3 "k" 1e3 "M" 1e6 "G" 1e9 "T" 1e12 "P" 1e15 "E" 1e18 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "Pi" 1125899906842624.0 "Ei" 1152921504606846976.0 }}
{{- mulf ($number | float64) (index $factors (trimPrefix $number $text)) }}
{{- end }}

{{/* pstrain.affinity is a role's affinity, or the anti-affinity preset spreading its pods over nodes. */}}
{{- define "pstrain.affinity" -}}
{{- $role := index .ctx.Values .component }}
{{- if $role.affinity }}
{{- toYaml $role.affinity }}
{{- else if eq $role.podAntiAffinity "soft" -}}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "pstrain.selectorLabels" . | nindent 12 }}
{{- else if eq $role.podAntiAffinity "hard" -}}
podAntiAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: kubernetes.io/hostname
      labelSelector:
        matchLabels:
          {{- include "pstrain.selectorLabels" . | nindent 10 }}
{{- end }}
{{- end }}

{{/*
pstrain.httpPort is the port of every pod's HTTP endpoint (/healthz, /readyz, /metrics, /status).
A pod also listens on its role's port, so the two must differ.
*/}}
{{- define "pstrain.httpPort" -}}
{{- $port := .Values.http.port | int64 }}
{{- range $role := list "ps" "worker" }}
{{- if eq $port ((index $.Values $role).port | int64) }}
{{- include "pstrain.fail" (printf "http.port %d is also %s.port: a %s pod listens on both, so they must differ" $port $role $role) }}
{{- end }}
{{- end }}
{{- $port }}
{{- end }}

{{/*
pstrain.logDir is where the daemon writes deploy.log; kubectl exec … tail relies on it, so
distributed-tensorflow's hyperparams.logdir can only name it.
*/}}
{{- define "pstrain.logDir" -}}
{{- $logDir := "/tmp/mnist-log" }}
{{- with .Values.hyperparams.logdir }}
{{- if ne (clean .) $logDir }}
{{- include "pstrain.fail" (printf "hyperparams.logdir %s: pstrain always logs to %s (kubectl exec … tail -f %s/deploy.log); remove hyperparams.logdir, and put storage there with logs or volumeMounts" . $logDir $logDir) }}
{{- end }}
{{- end }}
{{- $logDir }}
{{- end }}

{{/*
pstrain.learningRate is hyperparams.learningrate as a number. helm's --set reads only integers as
numbers, so --set hyperparams.learningrate=0.01 gives the string "0.01": the schema accepts a
string of a number's form, whose range it cannot check, and this refuses one out of range.
*/}}
{{- define "pstrain.learningRate" -}}
{{- $given := .Values.hyperparams.learningrate }}
{{- $rate := $given | float64 }}
{{- if or (le $rate 0.0) (gt $rate 10.0) }}
{{- include "pstrain.fail" (printf "hyperparams.learningrate %v is out of range: it must be above 0 and at most 10" $given) }}
{{- end }}
{{- $rate }}
{{- end }}

{{/* pstrain.configPath is the daemon's configuration file, from the ConfigMap. */}}
{{- define "pstrain.configPath" -}}
/etc/pstrain/pstrain.yaml
{{- end }}

{{/*
pstrain.dataDir is the directory the daemon reads the MNIST files from: data.mountPath with
data.volume; distributed-tensorflow's hyperparams.datadir, which must be on one of volumeMounts
(pstrain downloads nothing); else the image's copy.
*/}}
{{- define "pstrain.dataDir" -}}
{{- $dataDir := .Values.hyperparams.datadir | default "" }}
{{- if and $dataDir .Values.data.volume }}
{{- include "pstrain.fail" "hyperparams.datadir and data.volume exclude each other: data.volume is read at data.mountPath; remove hyperparams.datadir" }}
{{- else if $dataDir }}
{{- $mounted := false }}
{{- range .Values.volumeMounts }}
{{- if hasPrefix (printf "%s/" (clean .mountPath)) (printf "%s/" (clean $dataDir)) }}
{{- $mounted = true }}
{{- end }}
{{- end }}
{{- if not $mounted }}
{{- include "pstrain.fail" (printf "hyperparams.datadir %s is on none of volumeMounts: pstrain downloads no data set; mount a volume holding the four MNIST IDX files there (volumes, volumeMounts), or remove hyperparams.datadir to train on the image's copy" $dataDir) }}
{{- end }}
{{- clean $dataDir }}
{{- else if .Values.data.volume }}
{{- .Values.data.mountPath }}
{{- else -}}
/usr/share/pstrain/data
{{- end }}
{{- end }}

{{/*
pstrain.podSubPath is the subPathExpr of a pod's own directory on a volume every pod of the
release mounts: [<clusterName>/]<namespace>/<pod>, so that releases of the same name in two
namespaces, or in two clusters sharing a node directory (kind clusters of kind-config.yml share
the host's /tmp/mnist), never share one. It names no node: a pod rescheduled to another node of
the same cluster finds the same directory wherever the nodes share it.
*/}}
{{- define "pstrain.podSubPath" -}}
{{ include "pstrain.clusterDir" . }}$(POD_NAMESPACE)/$(POD_NAME)
{{- end }}

{{/* pstrain.clusterDir is the cluster's directory above the namespaces': "<clusterName>/", or nothing. */}}
{{- define "pstrain.clusterDir" -}}
{{- with .Values.clusterName }}{{ . }}/{{ end }}
{{- end }}

{{/*
pstrain.hostPathType is a volume source with a hostPath's type defaulted to DirectoryOrCreate:
with a sub-directory per pod, a node lacking the directory would otherwise leave the pods in
CreateContainerConfigError.
*/}}
{{- define "pstrain.hostPathType" -}}
{{- $source := deepCopy . }}
{{- if and $source.hostPath (not $source.hostPath.type) }}
{{- $_ := set $source.hostPath "type" "DirectoryOrCreate" }}
{{- end }}
{{- toJson $source }}
{{- end }}

{{/*
pstrain.logStorage is, as JSON, the log directory's mount, its volume, whether the chart owns
that volume (chartVolume), the other entries of volumeMounts and volumes (extraMounts,
extraVolumes), and the log volume of volumes that an explicit logs.type overrides (overridden).
With logs.type auto, a mount at the log directory in volumeMounts (as in distributed-tensorflow
values files) gives the log volume, else the chart's emptyDir. An explicit logs.type, emptyDir or
hostPath, wins over such a mount: the values file's volume is left out of the pods (unless another
mount uses it), so that --set logs.type=emptyDir with values.yml meets Pod Security restricted.
Either way each pod writes into its own sub-directory unless the mount sets one.
*/}}
{{- define "pstrain.logStorage" -}}
{{- $logDir := include "pstrain.logDir" . }}
{{- $mount := dict }}
{{- $extraMounts := list }}
{{- range .Values.volumeMounts }}
{{- if eq (clean .mountPath) $logDir }}
{{- $mount = . }}
{{- else }}
{{- $extraMounts = append $extraMounts . }}
{{- end }}
{{- end }}
{{- $volume := dict }}
{{- range .Values.volumes }}
{{- if and $mount (eq .name $mount.name) }}
{{- $volume = . }}
{{- end }}
{{- end }}
{{- if and $mount (not $volume) }}
{{- include "pstrain.fail" (printf "volumeMounts mounts %s from volume %q, which volumes does not define" $logDir $mount.name) }}
{{- end }}
{{- $type := .Values.logs.type }}
{{- $chartVolume := or (not $mount) (ne $type "auto") }}
{{- /* The values file's log volume that logs.type overrides: left out of the pods unless
another mount uses it. */}}
{{- $overridden := dict }}
{{- $usedElsewhere := false }}
{{- if and $chartVolume $mount }}
{{- $overridden = $volume }}
{{- range $extraMounts }}
{{- if eq .name $volume.name }}
{{- $usedElsewhere = true }}
{{- end }}
{{- end }}
{{- end }}
{{- $extraVolumes := list }}
{{- range .Values.volumes }}
{{- if or (not $mount) (ne .name $mount.name) }}
{{- $extraVolumes = append $extraVolumes . }}
{{- else if not $chartVolume }}
{{- $volume = include "pstrain.hostPathType" . | fromJson }}
{{- $extraVolumes = append $extraVolumes $volume }}
{{- else if $usedElsewhere }}
{{- $extraVolumes = append $extraVolumes . }}
{{- end }}
{{- end }}
{{- if $chartVolume }}
{{- $mount = dict "name" "pstrain-logs" "mountPath" $logDir }}
{{- $volume = dict "name" "pstrain-logs" "emptyDir" (dict) }}
{{- if eq $type "hostPath" }}
{{- $volume = dict "name" "pstrain-logs" "hostPath" (dict "path" .Values.logs.hostPath "type" "DirectoryOrCreate") }}
{{- end }}
{{- end }}
{{- if not (or $mount.subPath $mount.subPathExpr) }}
{{- $mount = merge (dict "subPathExpr" (include "pstrain.podSubPath" .)) $mount }}
{{- end }}
{{- dict "mount" $mount "volume" $volume "chartVolume" $chartVolume "extraMounts" $extraMounts "extraVolumes" $extraVolumes "overridden" $overridden | toJson }}
{{- end }}

{{/*
pstrain.volumeSource names a volume's source and what it holds, for people: "hostPath /tmp/mnist",
"persistentVolumeClaim logs", "emptyDir".
*/}}
{{- define "pstrain.volumeSource" -}}
{{- $source := omit . "name" }}
{{- $kind := keys $source | sortAlpha | first }}
{{- $spec := index $source $kind | default dict }}
{{- $detail := $spec.path | default $spec.claimName | default $spec.server | default $spec.name | default "" }}
{{- trim (printf "%s %s" $kind $detail) }}
{{- end }}

{{/*
pstrain.serviceAccountName is the ServiceAccount of the release's pods: serviceAccount.name, else
<prefix> when the chart creates it; empty (the namespace's default) when it creates none and no
name is given.
*/}}
{{- define "pstrain.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- .Values.serviceAccount.name | default (include "pstrain.fullname" .) }}
{{- else }}
{{- .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* pstrain.authSecret is the name of the Secret holding the shared key. */}}
{{- define "pstrain.authSecret" -}}
{{- .Values.auth.existingSecret | default (include "pstrain.componentName" (dict "ctx" . "component" "auth")) }}
{{- end }}

{{/*
pstrain.authKeyFile is the file every ps and worker reads the shared key from: the Secret's data
key auth.key, mounted read-only. Empty when authentication is off.
*/}}
{{- define "pstrain.authKeyFile" -}}
{{- if .Values.auth.enabled -}}
/etc/pstrain-auth/auth.key
{{- end }}
{{- end }}

{{/*
pstrain.authSecretKey is the data key of the Secret holding the shared key: auth.key of
auth.existingSecret, else "token", which Kubernetes writes into the chart's own Secret of type
kubernetes.io/service-account-token. A key made in the cluster, once, rather than at rendering:
every rendering of the same values is the same.
*/}}
{{- define "pstrain.authSecretKey" -}}
{{- ternary .Values.auth.key "token" (not (empty .Values.auth.existingSecret)) }}
{{- end }}

{{/*
pstrain.checkpointStorage is, as JSON, where checkpoints go: the daemon's checkpointDir (dir),
the chart's checkpoint volume (volume, without a name; absent when checkpoints stay in the log
directory or on the ps's claim) and whether the ps pods get a claim per pod (claim).
*/}}
{{- define "pstrain.checkpointStorage" -}}
{{- $c := .Values.checkpoints }}
{{- $logDir := include "pstrain.logDir" . }}
{{- $storage := dict "dir" $logDir "claim" $c.persistentVolumeClaim.enabled }}
{{- if and $c.volume $c.persistentVolumeClaim.enabled }}
{{- include "pstrain.fail" "checkpoints.volume and checkpoints.persistentVolumeClaim.enabled exclude each other: set one of them" }}
{{- end }}
{{- if or $c.volume $c.persistentVolumeClaim.enabled }}
{{- $path := clean $c.mountPath }}
{{- $taken := dict $logDir "the log directory" (include "pstrain.configPath" . | dir) "the configuration's directory" }}
{{- with include "pstrain.authKeyFile" . }}
{{- $_ := set $taken (dir .) "the key's directory" }}
{{- end }}
{{- if .Values.data.volume }}
{{- $_ := set $taken (clean .Values.data.mountPath) "data.mountPath" }}
{{- end }}
{{- with index $taken $path }}
{{- include "pstrain.fail" (printf "checkpoints.mountPath %s is also %s: checkpoints need a directory of their own" $path .) }}
{{- end }}
{{- $_ := set $storage "dir" $path }}
{{- with $c.volume }}
{{- $_ := set $storage "volume" (include "pstrain.hostPathType" . | fromJson) }}
{{- end }}
{{- end }}
{{- toJson $storage }}
{{- end }}

{{/*
pstrain.run is, as JSON, the run's identity beyond its settings (the daemon's runId and
runIdConfigMap): a fresh install is a fresh run even on node directories holding an earlier run's
checkpoints and completion records, and a re-apply of the same manifests is the same run. runId
when given. Else, with no ConfigMap of the release in the cluster (an install, or a rendering
without a cluster: helm template, Argo CD), runIdConfigMap: the pods take the UID of the release's
ConfigMap, which the install creates and an upgrade, a restart or a re-apply keeps; nothing
random, so every rendering is the same. Else what the ConfigMap in the cluster holds (a release
of a chart that chose a random id keeps it; one without run ids resumes by its settings alone).
Chosen once per rendering and kept in .Values.renderedRun.
*/}}
{{- define "pstrain.run" -}}
{{- if not (hasKey .Values "renderedRun") }}
{{- $name := include "pstrain.componentName" (dict "ctx" . "component" "config") }}
{{- $run := dict "id" .Values.runId "configMap" "" }}
{{- if not .Values.runId }}
{{- $configMap := lookup "v1" "ConfigMap" .Release.Namespace $name }}
{{- if $configMap }}
{{- $file := index ($configMap.data | default dict) (include "pstrain.configPath" . | base) | default "" | fromYaml }}
{{- $run = dict "id" ($file.runId | default "" | toString) "configMap" ($file.runIdConfigMap | default "" | toString) }}
{{- else }}
{{- $_ := set $run "configMap" $name }}
{{- end }}
{{- end }}
{{- $_ := set .Values "renderedRun" $run }}
{{- end }}
{{- toJson .Values.renderedRun }}
{{- end }}

{{/* pstrain.runId is the run id the chart gives the daemon; empty when it gives none. */}}
{{- define "pstrain.runId" -}}
{{- (include "pstrain.run" . | fromJson).id }}
{{- end }}

{{/*
pstrain.runIdConfigMap is the ConfigMap whose UID the pods take as their run id, when the chart
gives none. They read it with their ServiceAccount's token (pstrain.kubernetesApiVolume), which
a Role allows to get this one ConfigMap.
*/}}
{{- define "pstrain.runIdConfigMap" -}}
{{- (include "pstrain.run" . | fromJson).configMap }}
{{- end }}

{{/*
pstrain.usesKubernetesApi is "true" when the ps and worker pods use the Kubernetes API: to read
their run id (pstrain.runIdConfigMap), or to scale their StatefulSets down at the end of the run
(endOfRun.scaleDown). Only then do they get a token, and the Role allowing just that.
*/}}
{{- define "pstrain.usesKubernetesApi" -}}
{{- if or (include "pstrain.runIdConfigMap" .) .Values.endOfRun.scaleDown }}true{{ end }}
{{- end }}

{{/*
pstrain.scaleDownOnCompletion is the daemon's scaleDownOnCompletion: the StatefulSets worker 0
scales to 0 once the run has completed, its own last; empty without endOfRun.scaleDown, which
needs a log volume that outlives the pods, or the trained model would go with them.
*/}}
{{- define "pstrain.scaleDownOnCompletion" -}}
{{- if .Values.endOfRun.scaleDown }}
{{- $logs := include "pstrain.logStorage" . | fromJson }}
{{- if hasKey $logs.volume "emptyDir" }}
{{- include "pstrain.fail" "endOfRun.scaleDown with the logs in an emptyDir would delete the trained model with the pods: give the log volume storage that outlives them (volumes and volumeMounts at /tmp/mnist-log, e.g. a persistentVolumeClaim, or logs.type hostPath)" }}
{{- end }}
{{- printf "%s,%s" (include "pstrain.componentName" (dict "ctx" . "component" "ps")) (include "pstrain.componentName" (dict "ctx" . "component" "worker")) }}
{{- end }}
{{- end }}

{{/*
pstrain.priorityClassName is a role's PriorityClass: its priorityClassName, else the chart's own
(templates/priorityclass.yaml) when priorityClass.value is given; empty for the cluster's default.
*/}}
{{- define "pstrain.priorityClassName" -}}
{{- $role := index .ctx.Values .component }}
{{- if $role.priorityClassName }}
{{- $role.priorityClassName }}
{{- else if not (kindIs "invalid" .ctx.Values.priorityClass.value) }}
{{- printf "%s-%s" .ctx.Release.Namespace (include "pstrain.componentName" .) }}
{{- end }}
{{- end }}

{{/*
pstrain.kubernetesApiVolume is the volume of the token and CA a pod reads its run id with, when
the chart gives none: a projected ServiceAccount token (the pods get no automounted one) and the
cluster's CA. It goes where the daemon looks, /var/run/secrets/pstrain/kubernetes.
*/}}
{{- define "pstrain.kubernetesApiVolume" -}}
name: kubernetes-api
projected:
  sources:
    - serviceAccountToken:
        path: token
        expirationSeconds: 3600
    - configMap:
        name: kube-root-ca.crt
        items:
          - key: ca.crt
            path: ca.crt
{{- end }}
