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
{{- /* The checkpoint directory's mount, unless checkpoints stay in the log directory. */}}
{{- $checkpointMount := dict }}
{{- if $checkpoints.volume }}
{{- $checkpointMount = dict "name" "pstrain-checkpoints" "mountPath" $checkpoints.dir "subPathExpr" "$(POD_NAME)" }}
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
        {{- include "pstrain.labels" . | nindent 8 }}
      annotations:
        checksum/config: {{ include (print .ctx.Template.BasePath "/configmap.yaml") .ctx | sha256sum }}
        {{- if and $values.auth.enabled (not $values.auth.existingSecret) }}
        # A new key (a new install, or a Secret deleted by hand) restarts every pod, so that all
        # of them hold the same key.
        checksum/auth: {{ include "pstrain.authKey" .ctx | sha256sum }}
        {{- end }}
        {{- if $values.metrics.podAnnotations }}
        prometheus.io/scrape: "true"
        prometheus.io/port: {{ $httpPort | quote }}
        prometheus.io/path: /metrics
        {{- end }}
    spec:
      {{- with $values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      # The daemon does not talk to the Kubernetes API, and reads no Service environment variables.
      automountServiceAccountToken: false
      enableServiceLinks: false
      terminationGracePeriodSeconds: {{ $values.terminationGracePeriodSeconds | int64 }}
      securityContext:
        {{- toYaml $values.podSecurityContext | nindent 8 }}
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
      {{- if and $hostPathMounts $values.logs.fixPermissions }}
      initContainers:
        # The kubelet creates the pod's directory on the node owned by root; the daemon runs as
        # runAsUser and must write deploy.log (and its checkpoint) into it.
        - name: log-permissions
          image: {{ include "pstrain.image" . }}
          imagePullPolicy: {{ $role.image.pullPolicy }}
          command:
            - chown
            - {{ printf "%v:%v" ($values.podSecurityContext.runAsUser | default 10001 | int64) ($values.podSecurityContext.runAsGroup | default 10001 | int64) | quote }}
            {{- range $hostPathMounts }}
            - {{ .mountPath | quote }}
            {{- end }}
          # The kubelet expands subPathExpr from this container's own env.
          env:
            - name: POD_NAME
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
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
          imagePullPolicy: {{ $role.image.pullPolicy }}
          args:
            - run
            - --config
            - {{ include "pstrain.configPath" .ctx }}
          env:
            - name: POD_NAME
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
            - name: POD_NAMESPACE
              valueFrom:
                fieldRef:
                  fieldPath: metadata.namespace
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
              - key: {{ $values.auth.key | quote }}
                path: {{ base $authKeyFile }}
            # Readable by the pod's fsGroup (0440), or by everyone in the container (0444)
            # when podSecurityContext has no fsGroup.
            defaultMode: {{ ternary 288 292 (not (empty ($values.podSecurityContext | default dict).fsGroup)) }}
        {{- end }}
        {{- with $values.data.volume }}
        - name: pstrain-data
          {{- toYaml . | nindent 10 }}
        {{- end }}
        {{- with $values.volumes }}
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

{{/* pstrain.probeTimings are the timing fields of a probe, from its values under probes. */}}
{{- define "pstrain.probeTimings" -}}
initialDelaySeconds: {{ .initialDelaySeconds | int64 }}
periodSeconds: {{ .periodSeconds | int64 }}
timeoutSeconds: {{ .timeoutSeconds | int64 }}
failureThreshold: {{ .failureThreshold | int64 }}
{{- end }}
