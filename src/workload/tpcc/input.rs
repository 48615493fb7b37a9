//! A transaction's input (clause 2.x.1 of each): what a terminal keys, drawn before the
//! transaction runs.

use super::mix::{DELIVERY, NEW_ORDER, ORDER_STATUS, PAYMENT, STOCK_LEVEL};
/// A transaction's input, drawn before it runs and kept until it succeeds, so that a retry
/// after a deadlock runs the same transaction again.
#[derive(Clone, Debug)]
pub(super) enum Input {
    NewOrder {
        d_id: i64,
        c_id: i64,
        /// (item id, supplying warehouse, quantity); an unused item id last when it must roll back.
        items: Vec<(i64, i64, i64)>,
        all_local: bool,
    },
    Payment {
        d_id: i64,
        c_w_id: i64,
        c_d_id: i64,
        customer: Customer,
        /// In cents.
        amount: i64,
    },
    OrderStatus {
        d_id: i64,
        customer: Customer,
    },
    Delivery {
        carrier: i64,
    },
    StockLevel {
        threshold: i64,
    },
}

impl Input {
    pub(super) fn kind(&self) -> usize {
        match self {
            Input::NewOrder { .. } => NEW_ORDER,
            Input::Payment { .. } => PAYMENT,
            Input::OrderStatus { .. } => ORDER_STATUS,
            Input::Delivery { .. } => DELIVERY,
            Input::StockLevel { .. } => STOCK_LEVEL,
        }
    }
}

#[derive(Clone, Debug)]
pub(super) enum Customer {
    Id(i64),
    LastName(String),
}
