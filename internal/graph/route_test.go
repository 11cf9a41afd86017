package graph

import (
	"reflect"
	"testing"
)

func TestIntersectHostnames(t *testing.T) {
	cases := []struct {
		listener string
		route    []string
		want     []string
	}{
		{"", nil, []string{""}},
		{"", []string{"b.com", "a.com", "a.com"}, []string{"a.com", "b.com"}},
		{"foo.example.com", nil, []string{"foo.example.com"}},
		{"foo.example.com", []string{"foo.example.com"}, []string{"foo.example.com"}},
		{"foo.example.com", []string{"bar.example.com"}, nil},
		{"*.example.com", []string{"foo.example.com", "a.b.example.com", "example.com", "other.org"}, []string{"a.b.example.com", "foo.example.com"}},
		{"foo.example.com", []string{"*.example.com"}, []string{"foo.example.com"}},
		{"*.example.com", []string{"*.foo.example.com"}, []string{"*.foo.example.com"}},
		{"*.foo.example.com", []string{"*.example.com"}, []string{"*.foo.example.com"}},
		{"*.example.com", []string{"*.example.org"}, nil},
	}
	for _, c := range cases {
		if got := intersectHostnames(c.listener, c.route); !reflect.DeepEqual(got, c.want) {
			t.Errorf("intersectHostnames(%q, %q) = %q, want %q", c.listener, c.route, got, c.want)
		}
	}
}

func TestNginxDuration(t *testing.T) {
	for in, want := range map[string]string{"10s": "10000ms", "500ms": "500ms", "1h30m": "5400000ms", "0s": ""} {
		got, err := nginxDuration(in)
		if err != nil || got != want {
			t.Errorf("nginxDuration(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "10", "1d", "1.5s", "123456s", "-1s", "10s;"} {
		if _, err := nginxDuration(in); err == nil {
			t.Errorf("nginxDuration(%q) succeeded, want an error", in)
		}
	}
}
