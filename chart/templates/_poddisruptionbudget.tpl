{{/*
pstrain.podDisruptionBudget is the PodDisruptionBudget of one role: (dict "ctx" $ "component"
"ps"|"worker"), named as its StatefulSet. It limits how many of the role's pods a voluntary
disruption (kubectl drain, a cluster autoscaler's scale-down, a node upgrade) evicts at once, so
that a drain of two nodes does not take both ps; a pod killed by a node's failure is not counted.
*/}}
{{- define "pstrain.podDisruptionBudget" -}}
{{- $budget := (index .ctx.Values .component).podDisruptionBudget }}
{{- if $budget.enabled -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "pstrain.componentName" . }}
  labels:
    {{- include "pstrain.labels" . | nindent 4 }}
spec:
  {{- if kindIs "string" $budget.maxUnavailable }}
  maxUnavailable: {{ $budget.maxUnavailable | quote }}
  {{- else }}
  maxUnavailable: {{ $budget.maxUnavailable | int64 }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "pstrain.selectorLabels" . | nindent 6 }}
{{- end }}
{{- end }}
