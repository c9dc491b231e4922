"""TLS and bearer tokens against a real server with a throwaway CA (openssl): the documented
connect() options (ca_pem, server_name, token), roles, and what a wrong setup answers."""

import os
import unittest

import voxcol
from voxcol_testing import ServerTestCase, make_tls_files

ADMIN, QUERY = "py-admin-token-7f3a", "py-query-token-19c2"


class SecureTest(ServerTestCase):
    @classmethod
    def server_flags(cls):
        cls.pki = os.path.join(cls.tmp.name, "pki")
        os.makedirs(cls.pki)
        cls.ca, cert, key, tokens = make_tls_files(cls.pki, {ADMIN: "admin", QUERY: "query"})
        return [f"--tls_cert={cert}", f"--tls_key={key}", f"--auth_tokens={tokens}"]

    @classmethod
    def connect(cls, **options):
        settings = dict(ca_pem=voxcol.read_pem(cls.ca), server_name="voxcol.test", token=ADMIN,
                        timeout=10)
        settings.update(options)
        return voxcol.connect(cls.address, **settings)

    def test_tls_and_admin_token_reach_every_service(self):
        x, z = self.column(0, 0)
        down = self.client.raycast((x, self.top, z), (0, -1, 0), self.height)
        self.assertTrue(down.hit)
        self.assertAlmostEqual(down.first.position.y, self.surface_from_voxels(x, z),
                               delta=0.1 * self.info.voxel_size)
        ack = self.client.fill_ball((x, down.first.position.y, z), 2)
        self.assertGreater(ack.version, 0)
        self.client.create_world("secure-copy", template_world="default")
        self.assertIn("secure-copy", [w.world for w in self.client.list_worlds().worlds])
        with self.client.batcher() as batcher:
            after = batcher.raycast((x, self.top, z), (0, -1, 0), self.height)
            batcher.flush()
            self.assertGreaterEqual(after.result(timeout=30).version, ack.version)
        with self.client.query_stream() as stream:
            self.assertEqual(stream.submit([voxcol.raycast_request((x, self.top, z))]).result(
                timeout=30).code, 0)

    def test_query_role_cannot_edit(self):
        with self.connect(token=QUERY) as reader:
            self.assertTrue(reader.raycast((0.5, self.top, 0.5), (0, -1, 0), self.height).hit)
            with self.assertRaises(voxcol.PermissionDeniedError):
                reader.fill_ball((0.5, 0.5, 0.5), 1)

    def test_missing_or_unknown_token(self):
        for token in ("", "not-a-token"):
            with self.connect(token=token) as anonymous:
                with self.assertRaises(voxcol.UnauthenticatedError):
                    anonymous.world_info()

    def test_wrong_server_name_or_plaintext_is_unavailable(self):
        with self.connect(server_name="") as unnamed:  # the certificate is not for 127.0.0.1
            with self.assertRaises(voxcol.UnavailableError) as caught:
                unnamed.world_info(timeout=5)
            self.assertIn(self.address, str(caught.exception))
        with voxcol.connect(self.address, token=ADMIN) as plaintext:
            with self.assertRaises(voxcol.UnavailableError):
                plaintext.world_info(timeout=5)

    def test_security_object_and_option_checks(self):
        security = voxcol.ChannelSecurity(ca_pem=voxcol.read_pem(self.ca),
                                          server_name="voxcol.test", token=ADMIN)
        with voxcol.connect(self.address, security=security) as client:
            self.assertEqual(client.world_info().voxel_bounds, self.info.voxel_bounds)
        with self.assertRaises(TypeError):
            voxcol.connect(self.address, security=security, token=ADMIN)
        with self.assertRaises(ValueError):
            voxcol.connect(self.address, ca_pem="not a pem")
        with self.assertRaises(ValueError):
            voxcol.connect(self.address, token="two\nlines")


if __name__ == "__main__":
    unittest.main()
