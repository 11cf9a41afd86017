package loadbalancer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listerscorev1 "k8s.io/client-go/listers/core/v1"
	listersdiscoveryv1 "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Controller serves every LoadBalancer Service of a cluster.
type Controller struct {
	opts     Options
	cidr     netip.Prefix
	client   kubernetes.Interface
	services listerscorev1.ServiceLister
	slices   listersdiscoveryv1.EndpointSliceLister
	queue    workqueue.TypedRateLimitingInterface[string]
	cancel   context.CancelFunc
	done     chan struct{}

	mu   sync.Mutex
	lbs  map[string]*balancer // by namespace/name
	used map[netip.Addr]string
}

// balancer is one Service's address and its proxies by port.
type balancer struct {
	addr    netip.Addr
	proxies map[portKey]forwarder
}

// portKey is a Service port: its number and transport.
type portKey struct {
	port int32
	udp  bool
}

// forwarder is a port's proxy: Proxy (TCP) or UDPProxy.
type forwarder interface {
	SetBackends([]string)
	Close()
}

// Start watches Services and EndpointSlices and serves LoadBalancer
// Services until Stop or ctx ends.
func Start(ctx context.Context, client kubernetes.Interface, opts Options) (*Controller, error) {
	opts, cidr, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	factory := informers.NewSharedInformerFactory(client, 0)
	c := &Controller{
		opts: opts, cidr: cidr, client: client, cancel: cancel, done: make(chan struct{}),
		services: factory.Core().V1().Services().Lister(),
		slices:   factory.Discovery().V1().EndpointSlices().Lister(),
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](
			100*time.Millisecond, 5*time.Second)),
		lbs: map[string]*balancer{}, used: map[netip.Addr]string{},
	}
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			c.queue.Add(key)
		}
	}
	enqueueSlice := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if s, ok := obj.(*discoveryv1.EndpointSlice); ok && s.Labels[discoveryv1.LabelServiceName] != "" {
			c.queue.Add(s.Namespace + "/" + s.Labels[discoveryv1.LabelServiceName])
		}
	}
	if _, err := factory.Core().V1().Services().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }, DeleteFunc: enqueue,
	}); err != nil {
		cancel()
		return nil, fmt.Errorf("loadbalancer: %w", err)
	}
	if _, err := factory.Discovery().V1().EndpointSlices().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueueSlice, UpdateFunc: func(_, o any) { enqueueSlice(o) }, DeleteFunc: enqueueSlice,
	}); err != nil {
		cancel()
		return nil, fmt.Errorf("loadbalancer: %w", err)
	}
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			cancel()
			factory.Shutdown()
			return nil, fmt.Errorf("loadbalancer: syncing %v informer", typ)
		}
	}
	go func() {
		defer close(c.done)
		defer factory.Shutdown()
		go func() {
			<-ctx.Done()
			c.queue.ShutDown()
		}()
		for c.processNext(ctx) {
		}
	}()
	return c, nil
}

// Stop closes every proxy and stops watching. Addresses are left in the
// Services' status, as a cloud load balancer outliving its controller would.
func (c *Controller) Stop() {
	c.cancel()
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, lb := range c.lbs {
		lb.close()
		delete(c.lbs, key)
	}
}

// Address is the address given to a Service, if any.
func (c *Controller) Address(namespace, name string) (netip.Addr, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	lb, ok := c.lbs[namespace+"/"+name]
	if !ok {
		return netip.Addr{}, false
	}
	return lb.addr, true
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	if err := c.sync(ctx, key); err != nil {
		if ctx.Err() == nil {
			c.opts.Log.Error(err, "syncing load balancer", "service", key)
		}
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	svc, err := c.services.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.release(key)
		return nil
	}
	if err == nil && !wanted(svc) {
		c.release(key)
		return c.clearStatus(ctx, svc)
	}
	if err != nil {
		return err
	}
	lb, err := c.ensure(key, svc)
	var notUsable *addressNotUsable
	if errors.As(err, &notUsable) {
		// Say so in the Service's status and look again later: the
		// address may be freed.
		c.release(key)
		if err := c.reportNotUsable(ctx, svc, notUsable.msg); err != nil {
			return err
		}
		c.queue.AddAfter(key, notUsableRetry)
		return nil
	}
	if err != nil {
		return err
	}
	version, versionErr := proxyProtocolOf(svc)
	if err := c.updateBackends(svc, lb, version); err != nil {
		return err
	}
	return c.updateStatus(ctx, svc, lb.addr, versionErr)
}

// notUsableRetry is how often a Service whose requested address cannot be
// given is looked at again.
const notUsableRetry = 5 * time.Second

// ConditionLoadBalancerIP is the Service condition saying, when False, that
// the Service's spec.loadBalancerIP cannot be given (Gatewall reads it).
const ConditionLoadBalancerIP = "LoadBalancerIPAssigned"

// reportNotUsable clears the Service's address and sets its
// LoadBalancerIPAssigned condition to False with the reason.
func (c *Controller) reportNotUsable(ctx context.Context, svc *corev1.Service, msg string) error {
	update := svc.DeepCopy()
	update.Status.LoadBalancer = corev1.LoadBalancerStatus{}
	meta.SetStatusCondition(&update.Status.Conditions, metav1.Condition{
		Type: ConditionLoadBalancerIP, Status: metav1.ConditionFalse, Reason: "AddressNotUsable", Message: msg,
		ObservedGeneration: svc.Generation,
	})
	if equality.Semantic.DeepEqual(svc.Status, update.Status) {
		return nil
	}
	if _, err := c.client.CoreV1().Services(svc.Namespace).UpdateStatus(ctx, update, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("updating service status: %w", err)
	}
	return nil
}

// wanted: LoadBalancer Services without a class (a class names another
// implementation) that are not being deleted.
func wanted(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.LoadBalancerClass == nil && svc.DeletionTimestamp == nil
}

func (c *Controller) release(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if lb, ok := c.lbs[key]; ok {
		lb.close()
		delete(c.used, lb.addr)
		delete(c.lbs, key)
		c.opts.Log.Info("load balancer removed", "service", key, "address", lb.addr)
	}
}

func (lb *balancer) close() {
	for port, p := range lb.proxies {
		p.Close()
		delete(lb.proxies, port)
	}
}

// updateBackends points each port's proxy at the ready endpoints, and sets
// the TCP ports' PROXY protocol version.
func (c *Controller) updateBackends(svc *corev1.Service, lb *balancer, version ProxyProtocol) error {
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: svc.Name})
	slices, err := c.slices.EndpointSlices(svc.Namespace).List(sel)
	if err != nil {
		return fmt.Errorf("listing endpoint slices: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, sp := range svc.Spec.Ports {
		if p, ok := lb.proxies[portOf(sp)]; ok {
			if tcp, ok := p.(*Proxy); ok {
				tcp.SetProxyProtocol(version)
			}
			p.SetBackends(readyBackends(slices, sp.Name, portOf(sp).udp))
		}
	}
	return nil
}

// readyBackends lists "ip:port" of ready endpoints for the named port,
// sorted so that the order is deterministic.
func readyBackends(slices []*discoveryv1.EndpointSlice, portName string, udp bool) []string {
	proto := corev1.ProtocolTCP
	if udp {
		proto = corev1.ProtocolUDP
	}
	seen := map[string]bool{}
	var out []string
	for _, s := range slices {
		if s.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		var port int32 = -1
		for _, p := range s.Ports {
			if p.Port != nil && (p.Protocol == nil && proto == corev1.ProtocolTCP || p.Protocol != nil && *p.Protocol == proto) && ptrString(p.Name) == portName {
				port = *p.Port
			}
		}
		if port < 0 {
			continue
		}
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready || len(e.Addresses) == 0 {
				continue
			}
			b := net.JoinHostPort(e.Addresses[0], strconv.Itoa(int(port)))
			if !seen[b] {
				seen[b] = true
				out = append(out, b)
			}
		}
	}
	sort.Strings(out)
	return out
}

func ptrString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// updateStatus writes the Service's address, and its
// LoadBalancerProxyProtocol condition when the annotation's value is not
// known (versionErr); a condition of an earlier failure is removed.
func (c *Controller) updateStatus(ctx context.Context, svc *corev1.Service, addr netip.Addr, versionErr error) error {
	update := svc.DeepCopy()
	update.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: addr.String(), IPMode: ptrTo(corev1.LoadBalancerIPModeVIP)}}
	meta.RemoveStatusCondition(&update.Status.Conditions, ConditionLoadBalancerIP)
	if versionErr != nil {
		meta.SetStatusCondition(&update.Status.Conditions, metav1.Condition{
			Type: ConditionProxyProtocol, Status: metav1.ConditionFalse, Reason: "UnknownVersion", Message: versionErr.Error(),
			ObservedGeneration: svc.Generation,
		})
	} else {
		meta.RemoveStatusCondition(&update.Status.Conditions, ConditionProxyProtocol)
	}
	if equality.Semantic.DeepEqual(svc.Status, update.Status) {
		return nil
	}
	if _, err := c.client.CoreV1().Services(svc.Namespace).UpdateStatus(ctx, update, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating service status: %w", err)
	}
	return nil
}

// clearStatus removes an address this controller gave a Service that is no
// longer a LoadBalancer Service of its own.
func (c *Controller) clearStatus(ctx context.Context, svc *corev1.Service) error {
	if svc.Spec.LoadBalancerClass != nil || svc.DeletionTimestamp != nil {
		return nil
	}
	ours := false
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		if a, err := netip.ParseAddr(ing.IP); err == nil && c.cidr.Contains(a) {
			ours = true
		}
	}
	if !ours {
		return nil
	}
	update := svc.DeepCopy()
	update.Status.LoadBalancer = corev1.LoadBalancerStatus{}
	if _, err := c.client.CoreV1().Services(svc.Namespace).UpdateStatus(ctx, update, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("clearing service status: %w", err)
	}
	return nil
}

func ptrTo[T any](v T) *T { return &v }
