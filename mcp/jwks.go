package mcp

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"sync"
	"time"
)

// Bounds of a JWKS fetch.
const (
	// maxJWKSBytes caps a JWK Set document.
	maxJWKSBytes = 1 << 20
	// maxJWKSKeys caps the keys kept from one document.
	maxJWKSKeys = 100
	// jwksTTL is how long a fetched set is used before it is fetched
	// again (sooner for a key id it does not hold; see jwksMinRefetch).
	jwksTTL = time.Hour
	// jwksMinRefetch is the least time between two fetches of the set,
	// so that tokens naming unknown key ids cannot make dsh hammer the
	// issuer.
	jwksMinRefetch = 30 * time.Second
)

// jwk is one JSON Web Key (RFC 7517) of a set, in the members dsh reads:
// RSA (n, e), EC P-256 (crv, x, y) and OKP Ed25519 (crv, x) public keys.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	Crv string `json:"crv"`
	N   string `json:"n"`
	E   string `json:"e"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// publicKey returns k's public key. Keys of other types or curves, private
// members aside, are errors: the set's reader skips them.
func (k *jwk) publicKey() (crypto.PublicKey, error) {
	switch k.Kty {
	case "RSA":
		n, err := b64Int(k.N)
		if err != nil {
			return nil, fmt.Errorf("n: %w", err)
		}
		e, err := b64Int(k.E)
		if err != nil {
			return nil, fmt.Errorf("e: %w", err)
		}
		if n.BitLen() < 2048 {
			return nil, fmt.Errorf("RSA modulus of %d bits, want at least 2048", n.BitLen())
		}
		if !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 {
			return nil, errors.New("RSA exponent out of range")
		}
		return &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
	case "EC":
		if k.Crv != "P-256" {
			return nil, fmt.Errorf("EC curve %q, want P-256", k.Crv)
		}
		x, err := b64Fixed(k.X, 32)
		if err != nil {
			return nil, fmt.Errorf("x: %w", err)
		}
		y, err := b64Fixed(k.Y, 32)
		if err != nil {
			return nil, fmt.Errorf("y: %w", err)
		}
		// The uncompressed point, parsed with its on-curve check.
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			return nil, err
		}
		return pub, nil
	case "OKP":
		if k.Crv != "Ed25519" {
			return nil, fmt.Errorf("OKP curve %q, want Ed25519", k.Crv)
		}
		x, err := b64Fixed(k.X, ed25519.PublicKeySize)
		if err != nil {
			return nil, fmt.Errorf("x: %w", err)
		}
		return ed25519.PublicKey(x), nil
	}
	return nil, fmt.Errorf("key type %q", k.Kty)
}

// b64Int decodes a base64url unsigned big-endian integer.
func b64Int(s string) (*big.Int, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 {
		return nil, errors.New("not a base64url integer")
	}
	return new(big.Int).SetBytes(b), nil
}

// b64Fixed decodes a base64url value of exactly n bytes.
func b64Fixed(s string, n int) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != n {
		return nil, fmt.Errorf("not %d base64url bytes", n)
	}
	return b, nil
}

// parseJWKS reads a JWK Set document into its usable signing keys by key
// id. Keys dsh cannot use (another type or curve, "use" other than "sig",
// malformed) are skipped, and so are keys past maxJWKSKeys. A key without
// a "kid" is kept under "", used for tokens that name none.
func parseJWKS(b []byte) (map[string]crypto.PublicKey, error) {
	var doc struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("not a JWK Set: %v", err)
	}
	keys := map[string]crypto.PublicKey{}
	for i := range doc.Keys {
		if len(keys) == maxJWKSKeys {
			break
		}
		k := &doc.Keys[i]
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		pub, err := k.publicKey()
		if err != nil {
			continue
		}
		if _, dup := keys[k.Kid]; !dup {
			keys[k.Kid] = pub
		}
	}
	return keys, nil
}

// keySet is an issuer's JWK Set, fetched from the URL that locate finds
// (its authorization-server metadata's jwks_uri) and cached: fetched again
// after jwksTTL, or for a key id it does not hold (the issuer rotated its
// keys), never more often than every jwksMinRefetch. A key removed from
// the document is gone at the next fetch.
type keySet struct {
	client *http.Client
	locate func(context.Context) (string, error) // the JWKS URL
	now    func() time.Time

	mu      sync.Mutex
	keys    map[string]crypto.PublicKey
	fetched time.Time // of the last attempt, successful or not
	lastErr error     // of the last attempt
}

// errUnknownKey is the error of a token whose key id the set does not
// hold, after a fetch (or too soon for one).
var errUnknownKey = errors.New("no key of the issuer's JWKS has the token's key id")

// key returns the public key of id, fetching the set when it is stale or
// does not hold id and the last fetch is jwksMinRefetch old.
func (s *keySet) key(ctx context.Context, id string) (crypto.PublicKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	fresh := s.keys != nil && now.Sub(s.fetched) < jwksTTL
	if k, ok := s.keys[id]; ok && fresh {
		return k, nil
	}
	if s.fetched.IsZero() || now.Sub(s.fetched) >= jwksMinRefetch {
		s.fetched = now
		keys, err := s.fetch(ctx)
		s.lastErr = err
		if err == nil {
			s.keys = keys
		}
	}
	if k, ok := s.keys[id]; ok {
		return k, nil
	}
	if s.keys == nil && s.lastErr != nil {
		return nil, s.lastErr
	}
	return nil, errUnknownKey
}

// fetch gets and parses the set, bounded by maxJWKSBytes and the client's
// timeout.
func (s *keySet) fetch(ctx context.Context) (map[string]crypto.PublicKey, error) {
	u, err := s.locate(ctx)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("fetching the issuer's JWKS: %v", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching the issuer's JWKS: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching the issuer's JWKS %s: %s", u, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("fetching the issuer's JWKS: %v", err)
	}
	if len(b) > maxJWKSBytes {
		return nil, fmt.Errorf("the issuer's JWKS %s is over %d bytes", u, maxJWKSBytes)
	}
	keys, err := parseJWKS(b)
	if err != nil {
		return nil, fmt.Errorf("the issuer's JWKS %s: %v", u, err)
	}
	return keys, nil
}
