package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/cryptosigner"
	"github.com/go-jose/go-jose/v4/jwt"
)

// ErrKey: a private key that cannot sign JWTs (unparsable, or of an
// unsupported type).
var ErrKey = errors.New("auth: unusable private key")

// ParsePrivateKeyPEM parses a PEM private key (PKCS #8, or the SEC 1 and
// PKCS #1 forms) for Options.ClientKey or Options.DPoPKey. The error never
// shows the key.
func ParsePrivateKeyPEM(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%w: no PEM block", ErrKey)
	}
	var k any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		k, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: not a parsable %s", ErrKey, block.Type)
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%w: %T cannot sign", ErrKey, k)
	}
	if _, err := signingAlg(s); err != nil {
		return nil, err
	}
	return s, nil
}

// signingAlg is the JWS algorithm for key: ES256/384/512 by curve, RS256
// for RSA, EdDSA for Ed25519.
func signingAlg(key crypto.Signer) (jose.SignatureAlgorithm, error) {
	switch pub := key.Public().(type) {
	case *ecdsa.PublicKey:
		switch pub.Curve {
		case elliptic.P256():
			return jose.ES256, nil
		case elliptic.P384():
			return jose.ES384, nil
		case elliptic.P521():
			return jose.ES512, nil
		}
	case *rsa.PublicKey:
		return jose.RS256, nil
	case ed25519.PublicKey:
		return jose.EdDSA, nil
	}
	return "", fmt.Errorf("%w: %T keys are not supported", ErrKey, key.Public())
}

// signJWTKid signs claims with key, with kid in the header when not "".
func signJWTKid(key crypto.Signer, kid string, claims map[string]any) (string, error) {
	return signJWT(key, "", kid, false, claims)
}

// signJWT signs claims with key as a compact JWT whose header carries typ
// and kid (when not "") and, when embedJWK, the public key.
func signJWT(key crypto.Signer, typ, kid string, embedJWK bool, claims map[string]any) (string, error) {
	alg, err := signingAlg(key)
	if err != nil {
		return "", err
	}
	opts := &jose.SignerOptions{EmbedJWK: embedJWK}
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: cryptosigner.Opaque(key)}, opts)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrKey, err)
	}
	s, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		return "", fmt.Errorf("%w: signing failed", ErrKey)
	}
	return s, nil
}
