package snapkv

import "errors"

// errNotYet is the placeholder result of the cache skeleton's bodies; it goes when the
// cache branch lands.
var errNotYet = errors.New("snapkv: not implemented yet")
