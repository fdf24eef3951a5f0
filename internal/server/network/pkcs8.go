package network

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/asn1"
	"errors"
	"hash"
)

// decryptPKCS8 decrypts an "ENCRYPTED PRIVATE KEY" (PKCS#8 with PBES2:
// PBKDF2 with HMAC-SHA1 or -SHA256, AES-CBC or 3DES-CBC), what OpenSSL 3
// writes for `openssl rsa -aes256` and what Redis reads with
// tls-key-file-pass; it returns the PrivateKeyInfo DER ("PRIVATE KEY").
func decryptPKCS8(der []byte, pass []byte) ([]byte, error) {
	var epki struct {
		Algo struct {
			OID    asn1.ObjectIdentifier
			Params asn1.RawValue
		}
		Data []byte
	}
	if _, err := asn1.Unmarshal(der, &epki); err != nil {
		return nil, err
	}
	if !epki.Algo.OID.Equal(oidPBES2) {
		return nil, errors.New("encrypted key: only PBES2 is supported")
	}
	var params struct {
		KDF struct {
			OID    asn1.ObjectIdentifier
			Params asn1.RawValue
		}
		Enc struct {
			OID asn1.ObjectIdentifier
			IV  []byte
		}
	}
	if _, err := asn1.Unmarshal(epki.Algo.Params.FullBytes, &params); err != nil {
		return nil, err
	}
	if !params.KDF.OID.Equal(oidPBKDF2) {
		return nil, errors.New("encrypted key: only PBKDF2 is supported")
	}
	var kdf struct {
		Salt      []byte
		Iter      int
		KeyLength int `asn1:"optional"`
		PRF       struct {
			OID asn1.ObjectIdentifier
		} `asn1:"optional"`
	}
	if _, err := asn1.Unmarshal(params.KDF.Params.FullBytes, &kdf); err != nil {
		return nil, err
	}
	prf := sha1.New
	switch {
	case kdf.PRF.OID == nil || kdf.PRF.OID.Equal(oidHMACSHA1):
	case kdf.PRF.OID.Equal(oidHMACSHA256):
		prf = sha256.New
	default:
		return nil, errors.New("encrypted key: unsupported PBKDF2 hash")
	}
	var keyLen int
	var block func([]byte) (cipher.Block, error)
	switch {
	case params.Enc.OID.Equal(oidAES128CBC):
		keyLen, block = 16, aes.NewCipher
	case params.Enc.OID.Equal(oidAES192CBC):
		keyLen, block = 24, aes.NewCipher
	case params.Enc.OID.Equal(oidAES256CBC):
		keyLen, block = 32, aes.NewCipher
	case params.Enc.OID.Equal(oidDESEDE3CBC):
		keyLen, block = 24, des.NewTripleDESCipher
	default:
		return nil, errors.New("encrypted key: unsupported cipher")
	}
	key, err := pbkdf2.Key(func() hash.Hash { return prf() }, string(pass), kdf.Salt, kdf.Iter, keyLen)
	if err != nil {
		return nil, err
	}
	b, err := block(key)
	if err != nil {
		return nil, err
	}
	if len(epki.Data) == 0 || len(epki.Data)%b.BlockSize() != 0 || len(params.Enc.IV) != b.BlockSize() {
		return nil, errors.New("encrypted key: bad length")
	}
	out := make([]byte, len(epki.Data))
	cipher.NewCBCDecrypter(b, params.Enc.IV).CryptBlocks(out, epki.Data)
	pad := int(out[len(out)-1])
	if pad == 0 || pad > b.BlockSize() || !hmac.Equal(out[len(out)-pad:], bytesOf(byte(pad), pad)) {
		return nil, errors.New("encrypted key: wrong passphrase")
	}
	return out[:len(out)-pad], nil
}

func bytesOf(c byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return b
}

var (
	oidPBES2      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidAES128CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
	oidDESEDE3CBC = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}
)
