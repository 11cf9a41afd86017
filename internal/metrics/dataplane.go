package metrics

import dto "github.com/prometheus/client_model/go"

// DataPlaneFamilies are the families every data-plane pod serves on its
// metrics port when metrics are on: nginx-agent's NGINX receiver reading
// NGINX's stub_status once a minute, labelled gateway_namespace and
// gateway_name (and nginx_connections_outcome for connections). test/agent
// checks them against the real agent; the dashboard may chart only these.
var DataPlaneFamilies = map[string]dto.MetricType{
	"nginx_http_requests_total":               dto.MetricType_COUNTER,
	"nginx_http_request_count_requests":       dto.MetricType_GAUGE,
	"nginx_http_connections_total":            dto.MetricType_COUNTER,
	"nginx_http_connection_count_connections": dto.MetricType_GAUGE,
}
