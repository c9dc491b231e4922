package voxcol

import (
	"crypto/tls"
	"crypto/x509"
	"time"

	"google.golang.org/grpc"
)

// DefaultTimeout is the deadline of every unary call of a client made without WithTimeout.
const DefaultTimeout = 10 * time.Second

// An Option configures a Client made by Dial.
type Option func(*options)

type options struct {
	world      string
	timeout    time.Duration
	tls        bool
	caPEM      []byte
	tlsConfig  *tls.Config
	token      string
	dialOpts   []grpc.DialOption
	optionErrs []string
}

// WithWorld names the world that requests of this client are about when they name none
// themselves (their `world` field is empty). Without it they go to the server's default world.
func WithWorld(world string) Option {
	return func(o *options) { o.world = world }
}

// WithTimeout sets the deadline of every unary call (default DefaultTimeout); a context with
// an earlier deadline still wins. 0 means no client deadline. Streams (Subscribe, EditStream,
// the batcher's Query stream) live as long as their context instead.
func WithTimeout(d time.Duration) Option {
	return func(o *options) {
		if d < 0 {
			o.optionErrs = append(o.optionErrs, "WithTimeout: negative duration "+d.String())
			return
		}
		o.timeout = d
	}
}

// WithTLS connects over TLS and verifies the server's certificate against caPEM, a PEM bundle
// of the CA certificates to trust, or against the system roots when caPEM is nil.
func WithTLS(caPEM []byte) Option {
	return func(o *options) {
		o.tls = true
		o.caPEM = caPEM
	}
}

// WithTLSConfig connects over TLS with config (cloned), for what WithTLS does not cover:
// client certificates for mutual TLS (Certificates), another expected server name
// (ServerName), a minimum version. It replaces WithTLS.
func WithTLSConfig(config *tls.Config) Option {
	return func(o *options) {
		if config == nil {
			o.optionErrs = append(o.optionErrs, "WithTLSConfig: nil config")
			return
		}
		o.tls = true
		o.tlsConfig = config.Clone()
	}
}

// WithToken sends `authorization: Bearer <token>` with every call. The server maps the token
// to a role (query < edit < admin). A token is only ever sent over TLS: Dial fails with
// codes.InvalidArgument when WithToken is given without WithTLS or WithTLSConfig.
func WithToken(token string) Option {
	return func(o *options) { o.token = token }
}

// WithDialOptions appends gRPC dial options, e.g. grpc.WithConnectParams to tune how fast the
// channel reconnects, or interceptors. They are applied after the client's own.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(o *options) { o.dialOpts = append(o.dialOpts, opts...) }
}

// certPool returns the pool of caPEM's certificates, or false when it holds none.
func certPool(caPEM []byte) (*x509.CertPool, bool) {
	pool := x509.NewCertPool()
	return pool, pool.AppendCertsFromPEM(caPEM)
}
