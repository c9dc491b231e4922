package voxcol

import "context"

// bearerToken sends `authorization: Bearer <token>` with every call (credentials.PerRPCCredentials).
type bearerToken string

func (t bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(t)}, nil
}

// RequireTransportSecurity keeps the token off plaintext connections.
func (bearerToken) RequireTransportSecurity() bool { return true }
