{{/*
Helpers taking a component take a dict: (dict "ctx" $ "component" "ps"). The component is the
role ("ps" or "worker") or another part of the release ("config", "test"); for a role it is also
the key of its values, the name of its port and the suffix of its StatefulSet and Service.
*/}}

{{/* pstrain.name is the value of the app.kubernetes.io/name label. */}}
{{- define "pstrain.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* pstrain.chart is the value of the helm.sh/chart label. */}}
{{- define "pstrain.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
pstrain.componentName is <release>-<component>. It is never truncated: the daemon reads its role
and ordinal from pod names <release>-<role>-<n>. The StatefulSet controller labels pods with
<name>-<10-character hash>, which must fit in 63 characters, hence the limit of 52.
*/}}
{{- define "pstrain.componentName" -}}
{{- $name := printf "%s-%s" .ctx.Release.Name .component }}
{{- if gt (len $name) 52 }}
{{- fail (printf "release name %q is too long: %q must be at most 52 characters" .ctx.Release.Name $name) }}
{{- end }}
{{- $name }}
{{- end }}

{{/* pstrain.selectorLabels select one component of one release, so ps and worker never overlap. */}}
{{- define "pstrain.selectorLabels" -}}
app.kubernetes.io/name: {{ include "pstrain.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* pstrain.labels are the labels of every resource and pod. */}}
{{- define "pstrain.labels" -}}
helm.sh/chart: {{ include "pstrain.chart" .ctx }}
{{ include "pstrain.selectorLabels" . }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
{{- end }}

{{/* pstrain.image is a role's image reference; the tag defaults to the chart's appVersion. */}}
{{- define "pstrain.image" -}}
{{- $image := (index .ctx.Values .component).image }}
{{- printf "%s:%s" $image.repository ($image.tag | default .ctx.Chart.AppVersion) }}
{{- end }}

{{/* pstrain.resources are a role's limits, and its requests: each one from request, else from limit. */}}
{{- define "pstrain.resources" -}}
{{- $role := index .ctx.Values .component }}
{{- $resources := dict }}
{{- with $role.limit }}
{{- $_ := set $resources "limits" . }}
{{- end }}
{{- with merge (deepCopy ($role.request | default (dict))) ($role.limit | default (dict)) }}
{{- $_ := set $resources "requests" . }}
{{- end }}
{{- toYaml $resources }}
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
{{- fail (printf "http.port %d is also %s.port: a %s pod listens on both, so they must differ" $port $role $role) }}
{{- end }}
{{- end }}
{{- $port }}
{{- end }}

{{/* pstrain.logDir is where the daemon writes deploy.log; kubectl exec … tail relies on it. */}}
{{- define "pstrain.logDir" -}}
/tmp/mnist-log
{{- end }}

{{/* pstrain.configPath is the daemon's configuration file, from the ConfigMap. */}}
{{- define "pstrain.configPath" -}}
/etc/pstrain/pstrain.yaml
{{- end }}

{{/* pstrain.dataDir is the directory the daemon reads the MNIST files from. */}}
{{- define "pstrain.dataDir" -}}
{{- if .Values.data.volume }}
{{- .Values.data.mountPath }}
{{- else -}}
/usr/share/pstrain/data
{{- end }}
{{- end }}

{{/*
pstrain.logStorage is, as JSON, the log directory's mount, its volume, whether the chart owns
that volume (chartVolume) and the other entries of volumeMounts (extraMounts). A mount at the
log directory in volumeMounts (as in distributed-tensorflow values files) replaces the chart's
log volume; either way each pod writes into its own sub-directory unless the mount sets one.
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
{{- $chartVolume := not $mount }}
{{- $volume := dict }}
{{- if $chartVolume }}
{{- $mount = dict "name" "pstrain-logs" "mountPath" $logDir }}
{{- $volume = dict "name" "pstrain-logs" "emptyDir" (dict) }}
{{- if eq .Values.logs.type "hostPath" }}
{{- $volume = dict "name" "pstrain-logs" "hostPath" (dict "path" .Values.logs.hostPath "type" "DirectoryOrCreate") }}
{{- end }}
{{- else }}
{{- range .Values.volumes }}
{{- if eq .name $mount.name }}
{{- $volume = . }}
{{- end }}
{{- end }}
{{- end }}
{{- if not (or $mount.subPath $mount.subPathExpr) }}
{{- $mount = merge (dict "subPathExpr" "$(POD_NAME)") $mount }}
{{- end }}
{{- dict "mount" $mount "volume" $volume "chartVolume" $chartVolume "extraMounts" $extraMounts | toJson }}
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
pstrain.authKey is the chart's own Secret's key, base64-encoded: the one the Secret in the
cluster already holds (helm upgrade must not change it under running pods), else a new random
one. helm template and helm install --dry-run see no cluster, so they render a new one. The key
is chosen once per rendering and remembered in .Values.auth (the one map all templates share),
so the Secret and the pods' checksum/auth annotation agree.
*/}}
{{- define "pstrain.authKey" -}}
{{- if not (hasKey .Values.auth "renderedKey") }}
{{- $secret := lookup "v1" "Secret" .Release.Namespace (include "pstrain.authSecret" .) }}
{{- $existing := "" }}
{{- if $secret }}
{{- $existing = index ($secret.data | default dict) .Values.auth.key | default "" }}
{{- end }}
{{- $_ := set .Values.auth "renderedKey" ($existing | default (randAlphaNum 48 | b64enc)) }}
{{- end }}
{{- .Values.auth.renderedKey }}
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
{{- fail "checkpoints.volume and checkpoints.persistentVolumeClaim.enabled exclude each other: set one of them" }}
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
{{- fail (printf "checkpoints.mountPath %s is also %s: checkpoints need a directory of their own" $path .) }}
{{- end }}
{{- $_ := set $storage "dir" $path }}
{{- with $c.volume }}
{{- $_ := set $storage "volume" . }}
{{- end }}
{{- end }}
{{- toJson $storage }}
{{- end }}
