import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// The TLS identity: a real certificate when the operator gives one, else a self-signed
/// ECDSA P-256 certificate made on first start and kept in the data folder.
/// A certificate or key the server cannot use, named, with what to do.
public struct CertificateError: Error, CustomStringConvertible {
    public let description: String
}

public enum Certificates {
    /// Makes `certPath`/`keyPath` when neither exists. Returns true when it made them.
    @discardableResult
    static func ensureSelfSigned(certPath: String, keyPath: String, serverName: String) throws -> Bool {
        let fm = FileManager.default
        if fm.fileExists(atPath: certPath) || fm.fileExists(atPath: keyPath) { return false }
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName {
            CommonName(serverName)
            OrganizationName("Chorus (self-signed)")
        }
        let now = Date()
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.serverAuth])
            SubjectAlternativeNames([
                .dnsName(serverName), .dnsName("localhost"),
                .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
            ])
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(),
            publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(5 * 365 * 86400),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions, issuerPrivateKey: .init(key))
        try certificate.serializeAsPEM().pemString.write(toFile: certPath, atomically: true, encoding: .utf8)
        try key.pemRepresentation.write(toFile: keyPath, atomically: true, encoding: .utf8)
        try fm.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyPath)
        return true
    }

    /// TLS 1.2's suites as Mozilla's "intermediate" profile has them (its DHE suites aside, which
    /// BoringSSL does not offer): forward secrecy and AEAD only, so no CBC with SHA-1. TLS 1.3's
    /// suites are all of that kind and are not configured here.
    static let tls12Ciphers: [NIOTLSCipher] = [
        .TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, .TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        .TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, .TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        .TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, .TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ]

    /// The TLS context for the certificate chain and key in these PEM files; an error names the file.
    public static func serverContext(certPath: String, keyPath: String) throws -> NIOSSLContext {
        let chain: [NIOSSLCertificateSource]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certPath).map { NIOSSLCertificateSource.certificate($0) }
        } catch {
            throw CertificateError(description: "Cannot read the certificate \(certPath) (\(error)): it must be a PEM file "
                + "of the server's certificate and its chain, readable by this user")
        }
        guard !chain.isEmpty else {
            throw CertificateError(description: "The certificate file \(certPath) holds no certificate (PEM, BEGIN CERTIFICATE)")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        } catch {
            throw CertificateError(description: "Cannot read the private key \(keyPath) (\(error)): it must be a PEM file "
                + "of the certificate's private key, readable by this user")
        }
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        tls.minimumTLSVersion = .tlsv12
        tls.cipherSuiteValues = tls12Ciphers
        // Closing waits this long for the client's close_notify (swift-nio-ssl's default is 5 s): a
        // client that does not answer (it stopped reading) held a stopping server that long.
        tls.shutdownTimeout = .seconds(1)
        do {
            return try NIOSSLContext(configuration: tls)
        } catch {
            throw CertificateError(description: "The key \(keyPath) does not go with the certificate \(certPath) (\(error))")
        }
    }
}
