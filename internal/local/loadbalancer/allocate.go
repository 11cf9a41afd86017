package loadbalancer

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// ensure gives the Service an address and a listening proxy per TCP or UDP port.
// A Service keeps its address while it exists (preferring the one in its
// status, so addresses survive a restart of the runtime); a new Service gets
// the lowest free address where all its ports can be bound.
func (c *Controller) ensure(key string, svc *corev1.Service) (*balancer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ports := servicePorts(svc)
	requested, err := requestedAddress(svc)
	if err != nil {
		return nil, err
	}
	if lb, ok := c.lbs[key]; ok && requested.IsValid() && lb.addr != requested {
		// The Service asks for another address now: move it.
		lb.close()
		delete(c.used, lb.addr)
		delete(c.lbs, key)
	}
	if lb, ok := c.lbs[key]; ok {
		for port, p := range lb.proxies {
			if !ports[port] {
				p.Close()
				delete(lb.proxies, port)
			}
		}
		for port := range ports {
			if _, ok := lb.proxies[port]; ok {
				continue
			}
			p, err := listen(lb.addr, port)
			if err != nil {
				return nil, fmt.Errorf("listening for port %d on %s: %w", port.port, lb.addr, err)
			}
			lb.proxies[port] = p
		}
		return lb, nil
	}
	if requested.IsValid() {
		return c.ensureRequested(key, requested, ports)
	}
	var candidates []netip.Addr
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		if a, err := netip.ParseAddr(ing.IP); err == nil && c.cidr.Contains(a) {
			candidates = append(candidates, a)
		}
	}
	for a := c.cidr.Addr().Next(); c.cidr.Contains(a) && a.Next().IsValid() && c.cidr.Contains(a.Next()); a = a.Next() {
		candidates = append(candidates, a)
	}
	for _, a := range candidates {
		if _, taken := c.used[a]; taken {
			continue
		}
		proxies, err := listenAll(a, ports)
		if err != nil {
			continue // taken by something else on the host: try the next address
		}
		lb := &balancer{addr: a, proxies: proxies}
		c.lbs[key], c.used[a] = lb, key
		c.opts.Log.Info("load balancer created", "service", key, "address", a)
		return lb, nil
	}
	return nil, fmt.Errorf("no free address in %s for %d ports", c.cidr, len(ports))
}

// servicePorts are the Service's TCP and UDP ports (SCTP is not served).
func servicePorts(svc *corev1.Service) map[portKey]bool {
	ports := map[portKey]bool{}
	for _, p := range svc.Spec.Ports {
		if p.Protocol == "" || p.Protocol == corev1.ProtocolTCP || p.Protocol == corev1.ProtocolUDP {
			ports[portOf(p)] = true
		}
	}
	return ports
}

func portOf(p corev1.ServicePort) portKey {
	return portKey{port: p.Port, udp: p.Protocol == corev1.ProtocolUDP}
}

// listen starts the proxy of one port on address a.
func listen(a netip.Addr, port portKey) (forwarder, error) {
	hostPort := net.JoinHostPort(a.String(), strconv.Itoa(int(port.port)))
	if port.udp {
		addr, err := net.ResolveUDPAddr("udp", hostPort)
		if err != nil {
			return nil, err
		}
		conn, err := net.ListenUDP("udp", addr)
		if err != nil {
			return nil, err
		}
		return NewUDPProxy(conn), nil
	}
	ln, err := net.Listen("tcp", hostPort)
	if err != nil {
		return nil, err
	}
	return NewProxy(ln), nil
}

func listenAll(a netip.Addr, ports map[portKey]bool) (map[portKey]forwarder, error) {
	proxies := map[portKey]forwarder{}
	for port := range ports {
		p, err := listen(a, port)
		if err != nil {
			for _, p := range proxies {
				p.Close()
			}
			return nil, errors.Join(fmt.Errorf("listening on %s:%d", a, port.port), err)
		}
		proxies[port] = p
	}
	return proxies, nil
}

// addressNotUsable is a Service's spec.loadBalancerIP this load balancer
// cannot give it; the Service says so in its status.
type addressNotUsable struct{ msg string }

func (e *addressNotUsable) Error() string { return e.msg }

// requestedAddress is the Service's spec.loadBalancerIP, if any.
func requestedAddress(svc *corev1.Service) (netip.Addr, error) {
	if svc.Spec.LoadBalancerIP == "" {
		return netip.Addr{}, nil
	}
	a, err := netip.ParseAddr(svc.Spec.LoadBalancerIP)
	if err != nil {
		return netip.Addr{}, &addressNotUsable{fmt.Sprintf("loadBalancerIP %q is not an IP address", svc.Spec.LoadBalancerIP)}
	}
	return a, nil
}

// ensureRequested gives the Service the address it asks for, if that
// address is in this load balancer's range, free, and bindable.
func (c *Controller) ensureRequested(key string, a netip.Addr, ports map[portKey]bool) (*balancer, error) {
	if !c.cidr.Contains(a) || a == c.cidr.Addr() {
		return nil, &addressNotUsable{fmt.Sprintf("%s is outside the load balancer's range %s", a, c.cidr)}
	}
	if owner, taken := c.used[a]; taken {
		return nil, &addressNotUsable{fmt.Sprintf("%s is in use by Service %s", a, owner)}
	}
	proxies, err := listenAll(a, ports)
	if err != nil {
		return nil, &addressNotUsable{fmt.Sprintf("%s cannot be bound on this host: %v", a, err)}
	}
	lb := &balancer{addr: a, proxies: proxies}
	c.lbs[key], c.used[a] = lb, key
	c.opts.Log.Info("load balancer created", "service", key, "address", a, "requested", true)
	return lb, nil
}
