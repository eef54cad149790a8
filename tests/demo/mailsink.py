#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A real SMTP server on loopback that stores every message it accepts.

Usage: mailsink.py PORT DIR      (Debian's python3-aiosmtpd)

Each accepted message becomes DIR/NNN.eml; the server runs until SIGTERM.
Used by the demo as the cluster's mail relay.
"""
import os
import signal
import sys

from aiosmtpd.controller import Controller


class Store:
    def __init__(self, directory):
        self.directory = directory
        self.count = 0

    async def handle_DATA(self, server, session, envelope):
        self.count += 1
        path = os.path.join(self.directory, '%03d.eml' % self.count)
        with open(path + '.tmp', 'wb') as f:
            f.write(envelope.original_content or envelope.content)
        os.rename(path + '.tmp', path)
        return '250 OK stored as %s' % os.path.basename(path)


def main():
    port, directory = int(sys.argv[1]), sys.argv[2]
    os.makedirs(directory, exist_ok=True)
    controller = Controller(Store(directory), hostname='127.0.0.1', port=port)
    controller.start()
    print('mailsink: listening on 127.0.0.1:%d, storing in %s' % (port, directory),
          flush=True)
    signal.sigwait([signal.SIGTERM, signal.SIGINT])
    controller.stop()


if __name__ == '__main__':
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM, signal.SIGINT])
    main()
