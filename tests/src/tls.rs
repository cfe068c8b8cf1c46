//! A TLS front for the fake model server, so model calls can be tested over HTTPS as they go to
//! real providers: a certificate authority made for the test signs a `localhost` certificate, the
//! CA is written to a PEM file for the daemon's `SSL_CERT_FILE`, and every TLS connection accepted
//! is relayed in plain text to the upstream address.

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::Arc,
};

use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

pub struct TlsFront {
    addr: SocketAddr,
    ca_file: PathBuf,
}

impl TlsFront {
    /// Serve TLS for `localhost` on a free port, relaying to `upstream`; the CA goes to
    /// `dir/test-ca.pem`.
    pub async fn start(upstream: SocketAddr, dir: &Path) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca_key = KeyPair::generate().expect("CA key");
        let ca = ca_params.self_signed(&ca_key).expect("CA certificate");
        let issuer = Issuer::new(ca_params, ca_key);
        let leaf_key = KeyPair::generate().expect("leaf key");
        let leaf = CertificateParams::new(vec!["localhost".to_string()])
            .expect("leaf params")
            .signed_by(&leaf_key, &issuer)
            .expect("leaf certificate");
        let ca_file = dir.join("test-ca.pem");
        std::fs::write(&ca_file, ca.pem()).expect("write the test CA");

        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
        let config = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(vec![leaf.der().clone()], key)
            .expect("TLS server config");
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind TLS front");
        let addr = listener.local_addr().expect("TLS front address");
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(client).await else {
                        return;
                    };
                    if let Ok(mut plain) = TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                    }
                });
            }
        });
        Self { addr, ca_file }
    }

    /// The OpenAI-style base URL over TLS: `https://localhost:PORT/v1`.
    pub fn openai_base(&self) -> String {
        format!("https://localhost:{}/v1", self.addr.port())
    }

    /// The PEM file of the CA that signed this front's certificate.
    pub fn ca_file(&self) -> &Path {
        &self.ca_file
    }
}
