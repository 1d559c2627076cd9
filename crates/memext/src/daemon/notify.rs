//! Telling systemd (`Type=notify`, `WatchdogSec=`) that the daemon is ready,
//! alive and stopping, through the `sd-notify` crate. The watchdog ping comes
//! from the loop itself, so a daemon stuck in a tick stops sending it and
//! systemd restarts it. Without NOTIFY_SOCKET (not run by systemd) all of this
//! does nothing.

use std::time::{Duration, Instant};

use sd_notify::NotifyState;

pub struct Supervisor {
    /// Half the watchdog period systemd asked for, if it asked.
    ping_every: Option<Duration>,
    last_ping: Option<Instant>,
}

impl Supervisor {
    pub fn from_env() -> Self {
        let mut usec = 0;
        let ping_every = sd_notify::watchdog_enabled(false, &mut usec)
            .then(|| Duration::from_micros(usec) / 2)
            .filter(|d| !d.is_zero());
        if let Some(d) = ping_every {
            tracing::info!(
                event = "watchdog",
                every_ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX),
                "systemd watchdog: a ping every {d:?}"
            );
        }
        Self {
            ping_every,
            last_ping: None,
        }
    }

    pub fn ready(&self) {
        send(&[NotifyState::Ready]);
    }

    /// Called from the loop on every turn; pings when half the period passed.
    pub fn alive(&mut self) {
        let Some(every) = self.ping_every else { return };
        if self.last_ping.is_none_or(|l| l.elapsed() >= every) {
            send(&[NotifyState::Watchdog]);
            self.last_ping = Some(Instant::now());
        }
    }

    pub fn stopping(&self) {
        send(&[NotifyState::Stopping]);
    }
}

fn send(state: &[NotifyState]) {
    if let Err(e) = sd_notify::notify(false, state) {
        tracing::warn!("telling systemd {state:?}: {e}");
    }
}
