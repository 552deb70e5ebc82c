{{/*
pstrain.statefulset is the StatefulSet of one role: (dict "ctx" $ "component" "ps"|"worker").
Both roles run the same daemon with the same configuration file; it tells them apart by pod name.
*/}}
{{- define "pstrain.statefulset" -}}
{{- $values := .ctx.Values }}
{{- $role := index $values .component }}
{{- $name := include "pstrain.componentName" . }}
{{- $logs := include "pstrain.logStorage" .ctx | fromJson }}
{{- $httpPort := include "pstrain.httpPort" .ctx }}
{{- $authKeyFile := include "pstrain.authKeyFile" .ctx }}
{{- $checkpoints := include "pstrain.checkpointStorage" .ctx | fromJson }}
{{- include "pstrain.immutableFields" . }}
{{- /* The checkpoint directory's mount, unless checkpoints stay in the log directory. */}}
{{- $checkpointMount := dict }}
{{- if $checkpoints.volume }}
{{- $checkpointMount = dict "name" "pstrain-checkpoints" "mountPath" $checkpoints.dir "subPathExpr" (include "pstrain.podSubPath" .ctx) }}
{{- else if and $checkpoints.claim (eq .component "ps") }}
{{- $checkpointMount = dict "name" "pstrain-checkpoints" "mountPath" $checkpoints.dir }}
{{- else if $checkpoints.claim }}
{{- /* Workers have no claim: their completion record stays in their log directory. */}}
{{- $checkpointMount = merge (dict "mountPath" $checkpoints.dir) (omit $logs.mount "readOnly") }}
{{- end }}
{{- /* The pod's own directories on a hostPath, which the kubelet creates owned by root. */}}
{{- $hostPathMounts := list }}
{{- if hasKey $logs.volume "hostPath" }}
{{- $hostPathMounts = append $hostPathMounts $logs.mount }}
{{- end }}
{{- if and $checkpoints.volume (hasKey $checkpoints.volume "hostPath") }}
{{- $hostPathMounts = append $hostPathMounts $checkpointMount }}
{{- end -}}
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ $name }}
  labels:
    {{- include "pstrain.labels" . | nindent 4 }}
spec:
  serviceName: {{ $name }}
  replicas: {{ $role.number | int64 }}
  podManagementPolicy: {{ $role.podManagementPolicy }}
  selector:
    matchLabels:
      {{- include "pstrain.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "pstrain.podLabels" . | nindent 8 }}
      annotations:
        {{- /* The chart's own annotations win over the role's podAnnotations, which win over
        podAnnotations. */}}
        {{- /* Of the configuration less the ps count: when that changes, worker 0 re-cuts the
        parameters over the ps the mounted file names (the kubelet keeps it current), and no pod
        rolls. */}}
        {{- $config := regexReplaceAll "(?m)^    ps: [0-9]+\n" (include (print .ctx.Template.BasePath "/configmap.yaml") .ctx) "" }}
        {{- $annotations := dict "checksum/config" ($config | sha256sum) }}
        {{- if $values.metrics.podAnnotations }}
        {{- $_ := set $annotations "prometheus.io/scrape" "true" }}
        {{- $_ := set $annotations "prometheus.io/port" (toString $httpPort) }}
        {{- $_ := set $annotations "prometheus.io/path" "/metrics" }}
        {{- end }}
        {{- merge $annotations ($role.podAnnotations | default dict) ($values.podAnnotations | default dict) | toYaml | nindent 8 }}
    spec:
      {{- with $values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with include "pstrain.serviceAccountName" .ctx }}
      serviceAccountName: {{ . }}
      {{- end }}
      # No token but the projected one for the Kubernetes API (pstrain.kubernetesApiVolume), and
      # no Service environment variables.
      automountServiceAccountToken: false
      enableServiceLinks: false
      terminationGracePeriodSeconds: {{ $values.terminationGracePeriodSeconds | int64 }}
      securityContext:
        {{- include "pstrain.podSecurityContext" .ctx | nindent 8 }}
      {{- with $values.schedulerName }}
      schedulerName: {{ . | quote }}
      {{- end }}
      {{- with $role.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with include "pstrain.affinity" . }}
      affinity:
        {{- . | nindent 8 }}
      {{- end }}
      {{- with $role.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with include "pstrain.topologySpread" . }}
      topologySpreadConstraints:
        {{- . | nindent 8 }}
      {{- end }}
      {{- with include "pstrain.priorityClassName" . }}
      priorityClassName: {{ . | quote }}
      {{- end }}
      {{- if and $hostPathMounts $values.logs.fixPermissions }}
      initContainers:
        # The kubelet creates the pod's directory on the node owned by root; the daemon runs as
        # runAsUser and must write deploy.log (and its checkpoint) into it.
        - name: log-permissions
          image: {{ include "pstrain.image" . }}
          imagePullPolicy: {{ include "pstrain.imagePullPolicy" . }}
          command:
            - chown
            - {{ printf "%v:%v" ($values.podSecurityContext.runAsUser | default 10001 | int64) ($values.podSecurityContext.runAsGroup | default 10001 | int64) | quote }}
            {{- range $hostPathMounts }}
            - {{ .mountPath | quote }}
            {{- end }}
          # The kubelet expands subPathExpr from this container's own env.
          env:
            {{- include "pstrain.podEnv" . | nindent 12 }}
          resources:
            {{- include "pstrain.resources" . | nindent 12 }}
          securityContext:
            runAsNonRoot: false
            runAsUser: 0
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities:
              drop:
                - ALL
              add:
                - CHOWN
          volumeMounts:
            {{- range $hostPathMounts }}
            - {{- toYaml . | nindent 14 }}
            {{- end }}
      {{- end }}
      containers:
        - name: pstrain
          image: {{ include "pstrain.image" . }}
          imagePullPolicy: {{ include "pstrain.imagePullPolicy" . }}
          args:
            - run
            - --config
            - {{ include "pstrain.configPath" .ctx }}
          env:
            {{- include "pstrain.podEnv" . | nindent 12 }}
            {{- with include "pstrain.extraEnv" . }}
            {{- . | nindent 12 }}
            {{- end }}
          {{- with $values.extraEnvFrom }}
          # A variable of env wins over one of the same name here: POD_NAME and POD_NAMESPACE
          # stay the pod's own.
          envFrom:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          ports:
            - name: {{ .component }}
              containerPort: {{ $role.port | int64 }}
              protocol: TCP
            - name: http
              containerPort: {{ $httpPort }}
              protocol: TCP
          {{- with $values.probes.liveness }}
          {{- if .enabled }}
          # /healthz answers while the process runs, from before it loads data or finds its peers.
          livenessProbe:
            httpGet:
              path: /healthz
              port: http
            {{- include "pstrain.probeTimings" . | nindent 12 }}
          {{- end }}
          {{- end }}
          {{- with $values.probes.readiness }}
          {{- if .enabled }}
          # /readyz is 503 while the pod waits for its peers, 200 while it trains and once it has
          # completed. The headless Service publishes the pod either way.
          readinessProbe:
            httpGet:
              path: /readyz
              port: http
            {{- include "pstrain.probeTimings" . | nindent 12 }}
          {{- end }}
          {{- end }}
          resources:
            {{- include "pstrain.resources" . | nindent 12 }}
          securityContext:
            {{- toYaml $values.securityContext | nindent 12 }}
          volumeMounts:
            - name: pstrain-config
              mountPath: {{ include "pstrain.configPath" .ctx | dir }}
              readOnly: true
            - {{- toYaml $logs.mount | nindent 14 }}
            {{- with $checkpointMount }}
            - {{- toYaml . | nindent 14 }}
            {{- end }}
            {{- if $authKeyFile }}
            - name: pstrain-auth
              mountPath: {{ dir $authKeyFile }}
              readOnly: true
            {{- end }}
            {{- if $values.data.volume }}
            - name: pstrain-data
              mountPath: {{ $values.data.mountPath | quote }}
              {{- with $values.data.subPath }}
              subPath: {{ . | quote }}
              {{- end }}
              readOnly: true
            {{- end }}
            {{- if include "pstrain.usesKubernetesApi" .ctx }}
            - name: kubernetes-api
              mountPath: /var/run/secrets/pstrain/kubernetes
              readOnly: true
            {{- end }}
            {{- with $logs.extraMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
      volumes:
        - name: pstrain-config
          configMap:
            name: {{ include "pstrain.componentName" (dict "ctx" .ctx "component" "config") }}
        {{- if $logs.chartVolume }}
        - {{- toYaml $logs.volume | nindent 10 }}
        {{- end }}
        {{- with $checkpoints.volume }}
        - name: pstrain-checkpoints
          {{- toYaml . | nindent 10 }}
        {{- end }}
        {{- if $authKeyFile }}
        - name: pstrain-auth
          secret:
            secretName: {{ include "pstrain.authSecret" .ctx }}
            items:
              - key: {{ include "pstrain.authSecretKey" .ctx | quote }}
                path: {{ base $authKeyFile }}
            # Readable by the pod's fsGroup (0440), or by everyone in the container (0444)
            # when podSecurityContext has no fsGroup.
            defaultMode: {{ ternary 288 292 (not (empty ($values.podSecurityContext | default dict).fsGroup)) }}
        {{- end }}
        {{- with $values.data.volume }}
        - name: pstrain-data
          {{- toYaml . | nindent 10 }}
        {{- end }}
        {{- if include "pstrain.usesKubernetesApi" .ctx }}
        - {{- include "pstrain.kubernetesApiVolume" .ctx | nindent 10 }}
        {{- end }}
        {{- with $logs.extraVolumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
  {{- if and $checkpoints.claim (eq .component "ps") }}
  {{- $claim := $values.checkpoints.persistentVolumeClaim }}
  # One claim per ps pod, pstrain-checkpoints-<pod>. Only the selector labels: the claim template
  # cannot change on upgrade, and helm.sh/chart and version labels would.
  volumeClaimTemplates:
    - metadata:
        name: pstrain-checkpoints
        labels:
          {{- include "pstrain.selectorLabels" . | nindent 10 }}
      spec:
        accessModes:
          {{- toYaml $claim.accessModes | nindent 10 }}
        {{- if eq $claim.storageClassName "-" }}
        storageClassName: ""
        {{- else if $claim.storageClassName }}
        storageClassName: {{ $claim.storageClassName | quote }}
        {{- end }}
        resources:
          requests:
            storage: {{ $claim.size | quote }}
  {{- end }}
{{- end }}

{{/*
pstrain.probeTimings are the timing fields of a probe, from its values under probes. An
initialDelaySeconds of 0 is left out: the API server does not store a field at its zero value,
so, rendered, every kubectl apply of the same manifests would send it again ("configured").
*/}}
{{- define "pstrain.probeTimings" -}}
{{- with .initialDelaySeconds | int64 -}}
initialDelaySeconds: {{ . }}
{{ end -}}
periodSeconds: {{ .periodSeconds | int64 }}
timeoutSeconds: {{ .timeoutSeconds | int64 }}
failureThreshold: {{ .failureThreshold | int64 }}
{{- end }}

{{/* pstrain.podEnv is the downward-API env the daemon and the subPathExpr of pstrain.podSubPath need. */}}
{{- define "pstrain.podEnv" -}}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
{{- end }}

{{/*
pstrain.extraEnv is the pstrain container's further env: extraEnv (Kubernetes EnvVars), then the
role's env (distributed-tensorflow's name: value map). Neither may replace POD_NAME or
POD_NAMESPACE, which name the pod's place and directories.
*/}}
{{- define "pstrain.extraEnv" -}}
{{- $env := .ctx.Values.extraEnv | default list }}
{{- range $name, $value := (index .ctx.Values .component).env }}
{{- $env = append $env (dict "name" $name "value" (toString $value)) }}
{{- end }}
{{- range $env }}
{{- if has .name (list "POD_NAME" "POD_NAMESPACE") }}
{{- include "pstrain.fail" (printf "extraEnv or %s.env sets %s, which the chart sets from the pod itself: the daemon and the pod's directories depend on it; remove it" $.component .name) }}
{{- end }}
{{- end }}
{{- with $env }}
{{- toYaml . }}
{{- end }}
{{- end }}

{{/*
pstrain.topologySpread is a role's topologySpreadConstraints; one without a labelSelector gets
the role's selector labels, so it spreads the role's pods.
*/}}
{{- define "pstrain.topologySpread" -}}
{{- $constraints := list }}
{{- range (index .ctx.Values .component).topologySpreadConstraints }}
{{- $constraint := deepCopy . }}
{{- if not $constraint.labelSelector }}
{{- $_ := set $constraint "labelSelector" (dict "matchLabels" (include "pstrain.selectorLabels" $ | fromYaml)) }}
{{- end }}
{{- $constraints = append $constraints $constraint }}
{{- end }}
{{- with $constraints }}
{{- toYaml . }}
{{- end }}
{{- end }}

{{/*
pstrain.immutableFields refuses, on helm upgrade, values that would change a field of the role's
StatefulSet in the cluster (lookup) that Kubernetes does not allow to change: the API server
would refuse the upgrade with "spec: Forbidden". helm template and install see none.
*/}}
{{- define "pstrain.immutableFields" -}}
{{- $name := include "pstrain.componentName" . }}
{{- $existing := lookup "apps/v1" "StatefulSet" .ctx.Release.Namespace $name }}
{{- if $existing }}
{{- $role := index .ctx.Values .component }}
{{- $instead := "keep it, or helm uninstall and install again" }}
{{- $was := $existing.spec.podManagementPolicy | default "OrderedReady" }}
{{- if ne $was $role.podManagementPolicy }}
{{- include "pstrain.fail" (printf "%s.podManagementPolicy %s: the StatefulSet %s in the cluster has %s, which Kubernetes does not allow to change (helm upgrade would fail with spec: Forbidden); %s" .component $role.podManagementPolicy $name $was $instead) }}
{{- end }}
{{- $selector := include "pstrain.selectorLabels" . | fromYaml }}
{{- if ne (toJson $existing.spec.selector.matchLabels) (toJson $selector) }}
{{- include "pstrain.fail" (printf "nameOverride %q: the StatefulSet %s in the cluster selects its pods by app.kubernetes.io/name %q, which Kubernetes does not allow to change (helm upgrade would fail with spec: Forbidden); %s" (.ctx.Values.nameOverride | default "") $name (index $existing.spec.selector.matchLabels "app.kubernetes.io/name" | default "") $instead) }}
{{- end }}
{{- $claim := .ctx.Values.checkpoints.persistentVolumeClaim }}
{{- $wanted := dict "enabled" (and $claim.enabled (eq .component "ps")) }}
{{- if $wanted.enabled }}
{{- $_ := set $wanted "storageClassName" (ternary "" ($claim.storageClassName | default "(default)") (eq $claim.storageClassName "-")) }}
{{- $_ := set $wanted "accessModes" (join "," $claim.accessModes) }}
{{- $_ := set $wanted "size" (toString $claim.size) }}
{{- end }}
{{- $has := dict "enabled" false }}
{{- range $existing.spec.volumeClaimTemplates }}
{{- if eq .metadata.name "pstrain-checkpoints" }}
{{- $has = dict "enabled" true "storageClassName" (ternary (.spec.storageClassName | default "") "(default)" (hasKey .spec "storageClassName")) "accessModes" (join "," .spec.accessModes) "size" (toString .spec.resources.requests.storage) }}
{{- end }}
{{- end }}
{{- range $key := list "enabled" "storageClassName" "accessModes" "size" }}
{{- $differ := ne (toString (index $wanted $key)) (toString (index $has $key)) }}
{{- if and (eq $key "size") $wanted.enabled $has.enabled }}
{{- /* The API server writes quantities in its own form: 1024Mi comes back as 1Gi. */}}
{{- $differ = ne (include "pstrain.quantity" $wanted.size) (include "pstrain.quantity" $has.size) }}
{{- end }}
{{- if $differ }}
{{- include "pstrain.fail" (printf "checkpoints.persistentVolumeClaim.%s: the StatefulSet %s in the cluster has %v, these values %v; Kubernetes does not allow its claim templates to change (helm upgrade would fail with spec: Forbidden): keep them, or helm uninstall, delete the claims and install again" $key $name (index $has $key) (index $wanted $key)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
