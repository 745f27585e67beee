"""The operator console (R-CART-5): a PyQt5 application that is a separate rclpy node."""
