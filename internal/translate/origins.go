package translate

import (
	"fmt"
	"sort"
	"strings"
)

// NameFiles puts before what a data plane said of these files (NGINX's
// error, which names a file such as /etc/nginx/secrets/client_ca_….pem)
// the objects each file it names is written from, so that the Gateway's
// status and events say which Secret, ConfigMap or policy to fix. They
// come first: an event's note is cut at 1 KiB, and NGINX's messages, one
// per pod, are long.
func (t *Translation) NameFiles(msg string) string {
	paths := make([]string, 0, len(t.FileOrigins))
	for p := range t.FileOrigins {
		if strings.Contains(msg, p) {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return msg
	}
	sort.Strings(paths)
	named := make([]string, 0, len(paths))
	for _, p := range paths {
		named = append(named, fmt.Sprintf("%s (%s)", strings.Join(t.FileOrigins[p], ", "), p))
	}
	return "NGINX failed on a file written from " + strings.Join(named, "; ") + ": " + msg
}
