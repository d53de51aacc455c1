#!/bin/sh
# Regenerates the stack's TEST-ONLY certificates (never trust them anywhere else): run from this directory
# with OpenSSL 3.
#   ca.pem / ca.key          a CA ("bb-stack test CA") that signs both leaves; give ca.pem to bb as BB_CA_FILE
#   server.pem / server.key  the stack's HTTPS certificate for localhost and 127.0.0.1
#   client.pem / client.key  a client certificate the stack accepts when it requires one (BB_CLIENT_CERT / BB_CLIENT_KEY)
# ECDSA P-256, PKCS#8 keys, valid from 2020 to 2120 so the committed files work on any test machine's clock.
set -eu
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
touch "$work/index.txt"
echo 01 > "$work/serial"
cat > "$work/ca.cnf" <<CNF
[ca]
default_ca = test_ca
[test_ca]
database = $work/index.txt
serial = $work/serial
new_certs_dir = $work
default_md = sha256
policy = any
unique_subject = no
copy_extensions = none
[any]
commonName = supplied
[ca_ext]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
[server_ext]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost,IP:127.0.0.1
[client_ext]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = clientAuth
CNF
sign() { # name, subject, extension section, issuer key
  openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out "$1.key"
  openssl req -new -key "$1.key" -subj "$2" -out "$work/$1.csr"
  if [ "$1" = ca ]; then self="-selfsign"; cert=""; else self=""; cert="-cert ca.pem"; fi
  openssl ca -batch -notext -config "$work/ca.cnf" $self $cert -keyfile ca.key -extensions "$3" \
    -startdate 20200101000000Z -enddate 21200101000000Z -in "$work/$1.csr" -out "$1.pem" 2>/dev/null
}
sign ca "/CN=bb-stack test CA" ca_ext
sign server "/CN=localhost" server_ext
sign client "/CN=bb-stack test client" client_ext
openssl verify -CAfile ca.pem server.pem client.pem
