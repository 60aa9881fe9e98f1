//! Release disciplines (`tcp.release`): how the packets the window allows leave the sender. One
//! file each, registered in `tcp::RELEASES`. Before the first RTT sample there is no srtt to pace
//! by, so every discipline sends its initial window as an ordinary window.

pub mod paced;
pub mod poisson;
pub mod window;
