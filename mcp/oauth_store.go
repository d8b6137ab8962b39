package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/oauth2"
)

// StoredToken is what dsh keeps of an import's authorization: the token,
// and the client it was issued to, to refresh it in later runs. It holds
// secrets: it is written to a file only the user can read, and never
// printed.
type StoredToken struct {
	Server       string        `json:"server"`
	URL          string        `json:"url"`
	ClientID     string        `json:"client_id"`
	ClientSecret string        `json:"client_secret,omitempty"`
	TokenURL     string        `json:"token_url"`
	AuthStyle    int           `json:"auth_style,omitempty"`
	Scopes       []string      `json:"scopes,omitempty"`
	Token        *oauth2.Token `json:"token"`
}

// config is the OAuth client that refreshes st's token.
func (st *StoredToken) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID:     st.ClientID,
		ClientSecret: st.ClientSecret,
		Endpoint:     oauth2.Endpoint{TokenURL: st.TokenURL, AuthStyle: oauth2.AuthStyle(st.AuthStyle)},
		Scopes:       st.Scopes,
	}
}

// TokenStore keeps the imports' tokens, by [TokenKey].
type TokenStore interface {
	// Load returns the token stored under key, or nil and no error when
	// there is none.
	Load(key string) (*StoredToken, error)
	// Save stores t under key, replacing what was there.
	Save(key string, t *StoredToken) error
	// Delete forgets key's token; a key without one is no error.
	Delete(key string) error
}

// TokenKey is the key an import's tokens are stored under: its server's
// name and URL (the same name for another URL is another login).
func TokenKey(server, url string) string {
	sum := sha256.Sum256([]byte(server + "\n" + url))
	return server + "-" + hex.EncodeToString(sum[:8])
}

// FileTokenStore stores each token in a file of its directory (created
// mode 0700), one JSON file per key, mode 0600, written atomically (a
// temporary file renamed over the old one).
type FileTokenStore struct {
	Dir string
}

// DefaultTokenDir is the directory of the default [FileTokenStore]:
// os.UserConfigDir()/dsh/oauth.
func DefaultTokenDir() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "dsh", "oauth"), nil
}

func (s FileTokenStore) path(key string) string {
	return filepath.Join(s.Dir, key+".json")
}

// Load implements [TokenStore].
func (s FileTokenStore) Load(key string) (*StoredToken, error) {
	b, err := os.ReadFile(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var t StoredToken
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("the stored tokens of %s are not valid JSON", key)
	}
	return &t, nil
}

// Save implements [TokenStore].
func (s FileTokenStore) Save(key string, t *StoredToken) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(s.Dir, "."+key+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() { _ = os.Remove(tmp) }() // gone after the rename
	if err := f.Chmod(0o600); err != nil {
		_ = f.Close()
		return err
	}
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, s.path(key))
}

// Delete implements [TokenStore].
func (s FileTokenStore) Delete(key string) error {
	err := os.Remove(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// defaultStore is the FileTokenStore of DefaultTokenDir, found at each use.
type defaultStore struct{}

func (defaultStore) store() (FileTokenStore, error) {
	dir, err := DefaultTokenDir()
	return FileTokenStore{Dir: dir}, err
}

func (d defaultStore) Load(key string) (*StoredToken, error) {
	s, err := d.store()
	if err != nil {
		return nil, err
	}
	return s.Load(key)
}

func (d defaultStore) Save(key string, t *StoredToken) error {
	s, err := d.store()
	if err != nil {
		return err
	}
	return s.Save(key, t)
}

func (d defaultStore) Delete(key string) error {
	s, err := d.store()
	if err != nil {
		return err
	}
	return s.Delete(key)
}
