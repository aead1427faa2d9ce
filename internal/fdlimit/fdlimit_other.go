//go:build !unix

package fdlimit

func soft() int { return 0 }
