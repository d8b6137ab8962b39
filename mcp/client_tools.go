package mcp

// Tools returns the names under which the server named server has its
// tools registered now (its last listing's), or nil for a server the
// client does not import or that has not listed its tools yet.
func (c *Client) Tools(server string) []string {
	for _, s := range c.servers {
		if s.spec.Name == server {
			if names := s.served.Load(); names != nil {
				return append([]string(nil), (*names)...)
			}
		}
	}
	return nil
}
