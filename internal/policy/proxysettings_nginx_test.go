package policy

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// Interesting sizes: around the defaults (4k pages, 8 buffers) and the
// 1024m proxy_max_temp_file_size limit.
var sizeTexts = []string{"0", "1", "1k", "2k", "4095", "4k", "4097", "8k", "12k", "14k", "15k", "16k", "28k", "32k", "64k", "1m", "512k", "1023m", "1024m", "1025m", "2048m"}
var bufferNumbers = []int64{2, 3, 4, 7, 8, 16, 64, 256}

func randomSized(r *rand.Rand) *sized {
	t := sizeTexts[r.Intn(len(sizeTexts))]
	s, err := parseSized(v1alpha1.Size(t))
	if err != nil {
		panic(err)
	}
	return s
}

func randomBuffering(r *rand.Rand) Buffering {
	var b Buffering
	if r.Intn(3) == 0 {
		v := r.Intn(2) == 0
		b.Disable = &v
	}
	if r.Intn(2) == 0 {
		b.BufferSize = randomSized(r)
	}
	if r.Intn(2) == 0 {
		s := randomSized(r)
		if s.bytes == 0 {
			s, _ = parseSized("8k") // buffers.size 0 is refused by the API (CRD and Go)
		}
		b.Buffers = &buffers{number: bufferNumbers[r.Intn(len(bufferNumbers))], size: *s}
	}
	if r.Intn(2) == 0 {
		b.Busy = randomSized(r)
	}
	return b
}

// pairConf renders a Gateway/route pair: Gateway settings at server level
// (inherited like http level), route settings in a location.
func pairConf(i int, gw, route Buffering) string {
	return fmt.Sprintf("server { listen 127.0.0.1:18081; server_name pair%d; %s location / { %s proxy_pass http://127.0.0.1:9; } }\n",
		i, strings.Join(lines(proxyDirectives(gw)), " "), strings.Join(lines(proxyDirectives(route)), " "))
}

func nginxT(t *testing.T, servers string) error {
	t.Helper()
	main := "worker_processes 1;\npid /var/run/nginx/nginx.pid;\nerror_log stderr;\nevents {}\nhttp {\n" +
		"client_body_temp_path /var/cache/nginx/c; proxy_temp_path /var/cache/nginx/p; fastcgi_temp_path /var/cache/nginx/f; uwsgi_temp_path /var/cache/nginx/u; scgi_temp_path /var/cache/nginx/s;\n" +
		servers + "}\n"
	out, err := nginxtest.Test([]config.File{{Path: config.MainConfPath, Data: []byte(main), Mode: 0o644}})
	if err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	return nil
}

// TestAcceptedBufferingPassesNginx: every random Gateway/route pair that
// Gatewall accepts passes real `nginx -t`, all pairs in one configuration.
func TestAcceptedBufferingPassesNginx(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(1))
	var conf strings.Builder
	accepted, tried := 0, 0
	for accepted < 3000 {
		tried++
		gw, route := randomBuffering(r), randomBuffering(r)
		if CheckProxy(gw, Buffering{}) != nil || CheckProxy(route, gw) != nil {
			continue
		}
		conf.WriteString(pairConf(accepted, gw, route))
		accepted++
	}
	if err := nginxT(t, conf.String()); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d accepted Gateway/route pairs (of %d generated) passed nginx -t", accepted, tried)
}

// TestBufferingVerdictMatchesNginx: for random pairs, Gatewall refuses
// exactly what NGINX rejects — never less (NGINX would get a config it
// rejects), never more (a valid policy would be refused).
func TestBufferingVerdictMatchesNginx(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(2))
	agree, rejected := 0, 0
	for i := 0; i < 250; i++ {
		gw, route := randomBuffering(r), randomBuffering(r)
		ours := CheckProxy(gw, Buffering{})
		if ours == nil {
			ours = CheckProxy(route, gw)
		}
		theirs := nginxT(t, pairConf(i, gw, route))
		if (ours == nil) != (theirs == nil) {
			t.Errorf("pair %d: Gatewall says %v, nginx -t says %v\n%s", i, ours, theirs, pairConf(i, gw, route))
			continue
		}
		agree++
		if theirs != nil {
			rejected++
		}
	}
	t.Logf("%d random pairs: Gatewall and nginx -t agreed on all (%d rejected by both)", agree, rejected)
}
