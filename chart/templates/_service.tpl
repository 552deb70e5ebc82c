{{/*
pstrain.service is the headless Service of one role: (dict "ctx" $ "component" "ps"|"worker").
It gives every pod the DNS name <pod>.<service>; addresses are published before pods are ready
because peers must find each other while starting. Its "http" port is what a ServiceMonitor
scrapes, and names the pods' HTTP endpoint in DNS SRV records.
*/}}
{{- define "pstrain.service" -}}
{{- $role := index .ctx.Values .component -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "pstrain.componentName" . }}
  labels:
    {{- include "pstrain.labels" . | nindent 4 }}
spec:
  clusterIP: None
  publishNotReadyAddresses: true
  selector:
    {{- include "pstrain.selectorLabels" . | nindent 4 }}
  ports:
    - name: {{ .component }}
      port: {{ $role.port | int64 }}
      targetPort: {{ .component }}
      protocol: TCP
    - name: http
      port: {{ include "pstrain.httpPort" .ctx }}
      targetPort: http
      protocol: TCP
{{- end }}
