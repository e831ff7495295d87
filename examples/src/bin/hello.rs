//! Hello: the smallest program. Every PE starts the runtime and says who it is.
//!
//! Run: `target/release/shmemrun -n 4 target/release/hello`

fn main() -> Result<(), shmem_core::Error> {
    let world = shmem_core::init()?;
    println!("Hello from PE {} of {}", world.my_pe(), world.n_pes());
    Ok(())
}
