package mcp

import (
	"net/http"
)

// sessionIDHeader is the streamable HTTP header that names a session.
const sessionIDHeader = "Mcp-Session-Id"

// cancelSession cancels the running calls of the session id, those
// waiting on a question included: each ends as cancelled, and its result
// reaches the --log as every call's does.
func (s *Server) cancelSession(id string) {
	if id == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for st, cancel := range s.cancel {
		if st.session != nil && st.session.ID() == id {
			cancel()
		}
	}
}

// endingSessions is in front of the SDK's streamable HTTP handler: a
// DELETE of a session (the client leaving) first cancels the session's
// calls, since closing it waits until its requests have been answered,
// and a call waiting on a question would hold it until the question's
// timeout.
func (s *Server) endingSessions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			s.cancelSession(r.Header.Get(sessionIDHeader))
		}
		next.ServeHTTP(w, r)
	})
}
