package confcheck

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gatewall/gatewall/internal/nginx/config"
)

// Server is an http server block as a request sees it: the port it serves,
// its name, and its locations.
type Server struct {
	Port    int
	Default bool
	// Name is the server_name; "" for none.
	Name      string
	Locations []Location
}

// Location is one location of a server.
type Location struct {
	// Modifier is "", "=" or "~".
	Modifier string
	Path     string
	Internal bool
	// NotFound says the location only answers 404.
	NotFound bool
}

// Servers returns the http server blocks of a Gateway's rendered files
// that serve a port (not the internal servers behind unix sockets).
func Servers(files []config.File) ([]Server, error) {
	var data []byte
	for _, f := range files {
		if f.Path == config.ServersConfPath {
			data = f.Data
		}
	}
	if data == nil {
		return nil, fmt.Errorf("no %s", config.ServersConfPath)
	}
	ds, err := Parse(config.ServersConfPath, data)
	if err != nil {
		return nil, err
	}
	var out []Server
	for _, d := range ds {
		if d.Name != "server" || d.Block == nil {
			continue
		}
		s := Server{Port: -1}
		for _, e := range d.Block {
			switch e.Name {
			case "listen":
				port, def := listenPort(e)
				if port > 0 {
					s.Port, s.Default = port, s.Default || def
				}
			case "server_name":
				s.Name = e.Args[0].Value
			case "location":
				s.Locations = append(s.Locations, locationOf(e))
			}
		}
		if s.Port > 0 {
			out = append(out, s)
		}
	}
	return out, nil
}

// listenPort returns the port a listen directive serves (0 for a sink's
// socket) and whether it makes the default server.
func listenPort(d *Directive) (int, bool) {
	addr := strings.TrimPrefix(d.Args[0].Value, "[::]:")
	if rest, ok := strings.CutPrefix(addr, "unix:"+config.RunDir+"port-"); ok {
		addr, _, _ = strings.Cut(rest, "-")
	}
	port, err := strconv.Atoi(addr)
	if err != nil {
		return 0, false
	}
	def := false
	for _, a := range d.Args[1:] {
		def = def || a.Value == "default_server"
	}
	return port, def
}

func locationOf(d *Directive) Location {
	l := Location{Path: d.Args[0].Value}
	if len(d.Args) == 2 {
		l.Modifier, l.Path = d.Args[0].Value, d.Args[1].Value
	}
	l.Internal = hasDirective(d.Block, "internal")
	l.NotFound = len(d.Block) == 1 && d.Block[0].Name == "return" && len(d.Block[0].Args) == 1 && d.Block[0].Args[0].Value == "404"
	return l
}
